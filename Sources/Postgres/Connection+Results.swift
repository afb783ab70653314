import CLibPQ

extension Connection {
    /// libpq's last error message for a connection, without its trailing newline.
    static func errorMessage(of pgconn: OpaquePointer) -> String {
        guard let text = PQerrorMessage(pgconn) else { return "unknown libpq error" }
        return String(cString: text).trimmingTrailingNewlines()
    }

    /// The error described by a failed `PGresult` (or by the connection when it is nil).
    func error(from result: OpaquePointer?, sql: String?) -> PostgresError {
        let lost = !isAlive
        guard let result else {
            let message = pgconn.map(Self.errorMessage(of:)) ?? "the connection is closed"
            return PostgresError(code: lost ? .connectionLost : .protocolViolation, message: message, sql: sql)
        }
        func field(_ code: Int32) -> String? {
            guard let value = PQresultErrorField(result, code) else { return nil }
            return String(cString: value)
        }
        let sqlState = field(CLIBPQ_DIAG_SQLSTATE).map(SQLState.init(rawValue:))
        let message = field(CLIBPQ_DIAG_MESSAGE_PRIMARY)
            ?? PQresultErrorMessage(result).map { String(cString: $0).trimmingTrailingNewlines() }
            ?? "unknown error"
        // A broken session is a lost connection whatever the message; otherwise a server
        // error has a SQLSTATE, and one without is libpq's own complaint.
        let code: PostgresError.Code = lost ? .connectionLost : (sqlState == nil ? .protocolViolation : .server)
        return PostgresError(
            code: code, sqlState: sqlState, message: message,
            detail: field(CLIBPQ_DIAG_MESSAGE_DETAIL), hint: field(CLIBPQ_DIAG_MESSAGE_HINT),
            constraint: field(CLIBPQ_DIAG_CONSTRAINT_NAME), table: field(CLIBPQ_DIAG_TABLE_NAME),
            column: field(CLIBPQ_DIAG_COLUMN_NAME), schema: field(CLIBPQ_DIAG_SCHEMA_NAME), sql: sql)
    }

    /// Copies a successful result's rows out, or throws its error. Does not clear `result`.
    func rows(from result: OpaquePointer?, sql: String?) throws -> PostgresRows {
        guard let result else { throw error(from: nil, sql: sql) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return Self.copyRows(of: result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            abandonCopy(status)
            throw PostgresError(
                code: .misuse, message: "COPY must run through copyIn/copyOut, not query/execute", sql: sql)
        case PGRES_PIPELINE_ABORTED:
            throw PostgresError(
                code: .server, sqlState: .inFailedSQLTransaction,
                message: "not run: an earlier statement in the pipeline failed", sql: sql)
        default:
            throw error(from: result, sql: sql)
        }
    }

    /// Ends a COPY that was started by the wrong method, so the connection stays usable.
    func abandonCopy(_ status: ExecStatusType) {
        guard let pgconn else { return }
        if status == PGRES_COPY_IN {
            _ = PQputCopyEnd(pgconn, "COPY FROM STDIN must run through copyIn")
        } else if status == PGRES_COPY_OUT {
            var buffer: UnsafeMutablePointer<CChar>?
            while case let length = PQgetCopyData(pgconn, &buffer, 0), length > 0 {
                PQfreemem(buffer)
                buffer = nil
            }
        } else {
            close()  // COPY BOTH (replication) cannot be left cleanly
            return
        }
        while let next = PQgetResult(pgconn) { PQclear(next) }
    }

    /// Copies every value of a result into one buffer.
    static func copyRows(of result: OpaquePointer) -> PostgresRows {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var names = [String](), types = [PostgresType](), formats = [PostgresFormat]()
        for column in 0..<Int32(columnCount) {
            names.append(PQfname(result, column).map { String(cString: $0) } ?? "")
            types.append(PostgresType(PQftype(result, column)))
            formats.append(PQfformat(result, column) == 1 ? .binary : .text)
        }
        var total = 0
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) { total += Int(PQgetlength(result, row, column)) }
        }
        var buffer = [UInt8]()
        buffer.reserveCapacity(total)
        var starts = [Int](), ends = [Int]()
        starts.reserveCapacity(rowCount * columnCount)
        ends.reserveCapacity(rowCount * columnCount)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(result, row, column) == 1 {
                    starts.append(-1)
                    ends.append(-1)
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                starts.append(buffer.count)
                if length > 0, let value = PQgetvalue(result, row, column) {
                    buffer.append(contentsOf: UnsafeRawBufferPointer(start: value, count: length))
                }
                ends.append(buffer.count)
            }
        }
        let affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        let storage = ResultStorage(
            columnNames: names, columnTypes: types, columnFormats: formats, rowCount: rowCount,
            buffer: buffer, starts: starts, ends: ends)
        return PostgresRows(storage: storage, affectedRows: affected)
    }

    /// Lays the parameters out for libpq (`PQexecParams`/`PQsendQueryParams`) and calls `body`.
    /// The pointers are valid only inside `body`.
    func withParameters<R>(
        of sql: SQL,
        _ body: (
            _ count: Int32, _ types: UnsafePointer<Oid>?, _ values: UnsafePointer<UnsafePointer<CChar>?>?,
            _ lengths: UnsafePointer<Int32>?, _ formats: UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        if let reason = sql.invalidReason {
            throw PostgresError(code: .encoding, message: reason, sql: sql.text)
        }
        guard !sql.text.holdsNUL else {
            throw PostgresError(code: .encoding, message: "the SQL text holds a NUL byte")
        }
        guard sql.bindings.count <= 65_535 else {
            throw PostgresError(code: .misuse, message: "more than 65535 parameters in one statement", sql: sql.text)
        }
        var types = [Oid](), lengths = [Int32](), formats = [Int32](), offsets = [Int]()
        var buffer = [UInt8]()
        for (index, binding) in sql.bindings.enumerated() {
            types.append(binding.type.rawValue)
            formats.append(binding.format.rawValue)
            guard let bytes = binding.bytes else {
                offsets.append(-1)
                lengths.append(0)
                continue
            }
            if binding.format == .text && bytes.contains(0) {
                throw PostgresError(
                    code: .encoding, message: "text parameter $\(index + 1) holds a NUL byte, which PostgreSQL text cannot hold",
                    sql: sql.text)
            }
            guard bytes.count < Int32.max else {
                throw PostgresError(code: .encoding, message: "parameter $\(index + 1) is larger than 2 GB", sql: sql.text)
            }
            offsets.append(buffer.count)
            lengths.append(Int32(bytes.count))
            buffer.append(contentsOf: bytes)
            buffer.append(0)  // text values are read as C strings
        }
        buffer.append(0)  // never empty, so it always has a base address
        return try buffer.withUnsafeBytes { raw in
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset < 0 ? nil : (raw.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
            }
            return try values.withUnsafeBufferPointer { values in
                try types.withUnsafeBufferPointer { types in
                    try lengths.withUnsafeBufferPointer { lengths in
                        try formats.withUnsafeBufferPointer { formats in
                            try body(
                                Int32(offsets.count), types.baseAddress, values.baseAddress,
                                lengths.baseAddress, formats.baseAddress)
                        }
                    }
                }
            }
        }
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = self
        while text.last == "\n" || text.last == "\r" { text.removeLast() }
        return text
    }
}
