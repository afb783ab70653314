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

    @Test("prepared() statements are prepared inside a pipeline once, then reused by pipelines and queries")
    func preparedInPipelines() async throws {
        try await TestDatabase.withSchema { _, pool in
            try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE t (v int8 PRIMARY KEY)")
                func insert(_ value: Int64) -> SQL { .prepared("INSERT INTO t VALUES (\(value))") }
                let count: SQL = .prepared("SELECT count(*) FROM t WHERE v > \(Int64(0))")
                // The same statement twice in the pipeline that prepares it.
                let first = try connection.pipeline([insert(1), insert(2), count])
                #expect(try first[2].scalar(Int.self) == 2)
                // A failure before a first preparation: nothing of that pipeline is kept, and the
                // statement it would have prepared is prepared by the next pipeline instead.
                let other: SQL = .prepared("SELECT sum(v) FROM t WHERE v > \(Int64(0))")
                #expect(throws: PostgresError.self) { try connection.pipeline([insert(3), insert(1), other]) }
                let second = try connection.pipeline([insert(3), other])
                #expect(try second[1].scalar(Int.self) == 6)
                #expect(try connection.query(count).scalar(Int.self) == 3)
                let names = try connection.query("""
                    SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'purchase_ledger_%' AND NOT from_sql
                    """).scalar(Int.self)
                #expect(names == 3)
                // Same name, other text (a hash collision) is refused, never run as the old one.
                #expect(SQL.prepared("SELECT 1").preparedName == SQL.prepared("SELECT 1").preparedName)
                #expect(SQL.prepared("SELECT 1").preparedName != SQL.prepared("SELECT 2").preparedName)
            }
        }
    }

    @Test("a setting made for a pipeline's transaction ends with it")
    func localSettingInPipeline() async throws {
        try await TestDatabase.withSchema { _, pool in
            try await pool.withConnection { connection in
                // The test cluster may run with it off; the session's own value is what returns.
                try connection.execute("SET synchronous_commit TO on")
                defer { _ = try? connection.execute("RESET synchronous_commit") }
                let inside = try connection.pipeline([
                    "SELECT set_config('synchronous_commit', 'off', true)", "SELECT current_setting('synchronous_commit')",
                ])
                #expect(try inside[1].scalar(String.self) == "off")
                #expect(try connection.query("SELECT current_setting('synchronous_commit')").scalar(String.self) == "on")
            }
        }
    }
}
