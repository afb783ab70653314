import CLibPQ

extension Connection {
    /// Runs `sql` as a named prepared statement of this session: the server parses and plans
    /// its text once per connection, and later calls only bind and execute. For a statement a
    /// hot path runs over and over with the same text (the event store's batch INSERT); parsing
    /// and planning are a large share of a short statement's cost.
    ///
    /// The text must be the same on every call with the same name; another text under a name
    /// already prepared is a `misuse` error, never silently the old statement.
    @discardableResult
    public func query(_ sql: SQL, preparedAs name: String, resultFormat: PostgresFormat = .text) throws -> PostgresRows {
        let pgconn = try handle()
        guard !name.isEmpty, !name.holdsNUL else {
            throw PostgresError(code: .misuse, message: "a prepared statement needs a name without NUL bytes")
        }
        if let prepared = preparedStatements[name] {
            guard prepared == sql.text else {
                throw PostgresError(code: .misuse, message: "prepared statement \(name) was prepared with another text", sql: sql.text)
            }
        } else {
            let result = try withParameters(of: sql) { count, types, _, _, _ in
                PQprepare(pgconn, name, sql.text, count, types)
            }
            defer { PQclear(result) }
            _ = try rows(from: result, sql: sql.text)
            preparedStatements[name] = sql.text
        }
        let result = try withParameters(of: sql) { count, _, values, lengths, formats in
            PQexecPrepared(pgconn, name, count, values, lengths, formats, resultFormat.rawValue)
        }
        defer { PQclear(result) }
        return try rows(from: result, sql: sql.text)
    }
}
