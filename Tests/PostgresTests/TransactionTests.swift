import Postgres
import TestSupport
import Testing

@Suite("Transactions commit, or roll back on a thrown error")
struct TransactionTests {
    @Test("a body that throws rolls back, and its error reaches the caller")
    func rollbackOnThrow() async throws {
        try await TestDatabase.withSchema { _, pool in
            try await pool.withConnection { try $0.execute("CREATE TABLE t (v int)") }
            await #expect(throws: ExpectedFailure.self) {
                try await pool.withTransaction { connection in
                    try connection.execute("INSERT INTO t VALUES (1)")
                    throw ExpectedFailure()
                }
            }
            try await pool.withTransaction { try $0.execute("INSERT INTO t VALUES (2)") }
            #expect(try await pool.scalar("SELECT string_agg(v::text, ',') FROM t", as: String.self) == "2")
        }
    }

    @Test("a nested transaction is a savepoint: its rollback keeps the outer work")
    func nestedSavepoint() async throws {
        try await TestDatabase.withSchema { _, pool in
            try await pool.withConnection { try $0.execute("CREATE TABLE t (v int PRIMARY KEY)") }
            try await pool.withTransaction { connection in
                try connection.execute("INSERT INTO t VALUES (1)")
                do {
                    try connection.transaction { inner in
                        try inner.execute("INSERT INTO t VALUES (2)")
                        try inner.execute("INSERT INTO t VALUES (1)")  // unique violation
                    }
                } catch SQLState.uniqueViolation {}
                try connection.execute("INSERT INTO t VALUES (3)")
            }
            #expect(try await pool.scalar("SELECT string_agg(v::text, ',' ORDER BY v) FROM t", as: String.self) == "1,3")
        }
    }

    @Test("a swallowed database error makes the commit fail instead of silently rolling back")
    func swallowedErrorFailsCommit() async throws {
        try await TestDatabase.withSchema { _, pool in
            try await pool.withConnection { try $0.execute("CREATE TABLE t (v int PRIMARY KEY)") }
            var caught = false
            do {
                try await pool.withTransaction { connection in
                    try connection.execute("INSERT INTO t VALUES (1)")
                    _ = try? connection.execute("INSERT INTO t VALUES (1)")
                }
            } catch SQLState.inFailedSQLTransaction {
                caught = true
            }
            #expect(caught)
            #expect(try await pool.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
        }
    }

    @Test("a transaction left open by a body is rolled back before the connection is reused")
    func leftOpenIsRolledBack() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE t (v int)")
                try connection.execute("BEGIN")
                try connection.execute("INSERT INTO t VALUES (1)")
            }
            let (count, inTransaction) = try await pool.withConnection { connection in
                (try connection.query("SELECT count(*) FROM t").scalar(Int.self), connection.isInTransaction)
            }
            await pool.close()
            #expect(count == 0)
            #expect(!inTransaction)
        }
    }
}
