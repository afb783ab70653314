import EmbeddedPostgres
import Foundation
import Postgres
import TestSupport
import Testing

@Suite("The pool survives a server restart")
struct PoolRestartTests {
    @Test("after pg_ctl restart the same pool serves queries again", .timeLimit(.minutes(5)))
    func survivesRestart() async throws {
        // A cluster of this test's own, so no other test ever sees the restart.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("purchase-ledger-restart-\(UUID().uuidString)")
        let cluster = try await EmbeddedCluster.start(in: folder, settings: ["fsync": "off"], logger: TestDatabase.logger)
        let pool = ConnectionPool(conninfo: cluster.conninfo, maxConnections: 2, logger: TestDatabase.logger)
        do {
            let before = try await pool.withConnection { $0.backendPID }
            // One query is in flight when the server goes down. It sleeps far longer than any
            // restart takes under load (a 30 s sleep once finished before a slow CI restart
            // began); the restart ends it, and the time limit catches a restart that does not.
            let running = BackendLatch()
            let inFlight = Task {
                try await pool.withConnection { connection in
                    running.record(connection)
                    try connection.execute("SELECT pg_sleep(600)")
                }
            }
            try await waitUntilSleeping(running, conninfo: cluster.conninfo)
            try await cluster.restart()
            let inFlightResult = await inFlight.result
            // A query that was running cannot succeed; its failure must be a typed connection error.
            var inFlightFailedAsConnectionError = false
            if case .failure(let error) = inFlightResult {
                inFlightFailedAsConnectionError = error.isPostgresConnectionError
            }
            #expect(inFlightFailedAsConnectionError, "in-flight query: \(inFlightResult)")

            // The idle connection died with the old server: noticed before use, or on first use.
            var after: Int32?
            for _ in 0..<2 where after == nil {
                do {
                    after = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()").scalar(Int32.self) }
                } catch {
                    #expect(error.isPostgresConnectionError, "first use after restart: \(error)")
                }
            }
            #expect(after != nil)
            #expect(after != before)
            // And both lanes of the pool work again.
            let sums = try await withThrowingTaskGroup(of: Int.self) { group in
                for value in 1...4 {
                    group.addTask { try await pool.withConnection { try $0.query("SELECT \(value) + 1").scalar(Int.self) ?? 0 } }
                }
                return try await group.reduce(0, +)
            }
            #expect(sums == 14)
        } catch {
            await pool.close()
            await cluster.destroy()
            throw error
        }
        await pool.close()
        await cluster.destroy()
    }
}
