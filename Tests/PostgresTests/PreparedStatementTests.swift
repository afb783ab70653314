import Postgres
import TestSupport
import Testing

@Suite("Prepared statements are parsed once per session")
struct PreparedStatementTests {
    @Test("a named statement is prepared once, then bound with new values on every call")
    func preparedOnce() async throws {
        try await TestDatabase.withSchema { _, pool in
            let (sums, prepared) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE t (v int8 PRIMARY KEY)")
                var sums: [Int?] = []
                for value in 1...3 {
                    let sql: SQL = "WITH i AS (INSERT INTO t VALUES (\(value)) RETURNING v) SELECT (coalesce((SELECT sum(v) FROM t), 0) + (SELECT v FROM i))::int8"
                    sums.append(try connection.query(sql, preparedAs: "add_one", resultFormat: .binary).scalar(Int.self))
                }
                let prepared = try connection.query(
                    "SELECT count(*) FROM pg_prepared_statements WHERE name = \("add_one") AND NOT from_sql"
                ).scalar(Int.self)
                return (sums, prepared)
            }
            // The CTE's insert is not visible to its own statement's sum: old sum + new value.
            #expect(sums == [1, 3, 6])
            #expect(prepared == 1)
        }
    }

    @Test("a name used for another text is refused; a server error leaves the statement usable")
    func misuseAndErrors() async throws {
        try await TestDatabase.withSchema { _, pool in
            try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE t (v int8 PRIMARY KEY)")
                try connection.query("INSERT INTO t VALUES (\(1))", preparedAs: "insert_t")
                let misuse = #expect(throws: PostgresError.self) {
                    try connection.query("DELETE FROM t WHERE v = \(1)", preparedAs: "insert_t")
                }
                #expect(misuse?.code == .misuse)
                do {
                    try connection.query("INSERT INTO t VALUES (\(1))", preparedAs: "insert_t")
                    Issue.record("a duplicate key must fail")
                } catch SQLState.uniqueViolation {}
                try connection.query("INSERT INTO t VALUES (\(2))", preparedAs: "insert_t")
                #expect(try connection.query("SELECT count(*) FROM t").scalar(Int.self) == 2)
            }
        }
    }
}
