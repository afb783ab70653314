import Postgres
import TestSupport
import Testing

@Suite("Pipeline mode sends a batch in one round trip")
struct PipelineTests {
    @Test("a batch returns every statement's rows, in order")
    func results() async throws {
        try await TestDatabase.withSchema { _, pool in
            let (inserted, total, echoed) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE t (v int8 PRIMARY KEY)")
                let inserts = (1...2000).map { value -> SQL in "INSERT INTO t VALUES (\(value))" }
                let results = try connection.pipeline(inserts + ["SELECT sum(v) FROM t", "SELECT \("é🧾") AS s"])
                return (
                    results.prefix(2000).reduce(0) { $0 + $1.affectedRows },
                    try results[2000].scalar(Int.self),
                    try results[2001].scalar(String.self))
            }
            #expect(inserted == 2000)
            #expect(total == 2000 * 2001 / 2)
            #expect(echoed == "é🧾")
        }
    }

    @Test("an error in the middle throws it, skips the rest, and leaves the connection usable")
    func errorInTheMiddle() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            try await pool.withConnection { try $0.execute("CREATE TABLE t (v int8 PRIMARY KEY)") }
            var caught = false
            do {
                _ = try await pool.withConnection { connection in
                    try connection.pipeline([
                        "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (1)",
                        "INSERT INTO t VALUES (3)", "SELECT 1",
                    ])
                }
            } catch SQLState.uniqueViolation {
                caught = true
            }
            #expect(caught)
            let (count, again, alive) = try await pool.withConnection { connection in
                let count = try connection.query("SELECT count(*) FROM t").scalar(Int.self)
                let again = try connection.pipeline(["INSERT INTO t VALUES (10)", "SELECT count(*) FROM t"])
                return (count, try again[1].scalar(Int.self), connection.isAlive)
            }
            #expect(count == 0)  // one implicit transaction: the statements before the error were rolled back
            #expect(again == 1)
            #expect(alive)
            await pool.close()
        }
    }
}
