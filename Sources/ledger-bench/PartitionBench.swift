import AppStoreClient
import EventStore
import Foundation
import LedgerProjections
import LedgerService
import LedgerStore
import Logging
import Postgres

/// `Tools/bench partition`: what the log's size costs, measured at one size per call on the log
/// `replay-grow` made: durable appends (8 callers), a rebuild of every projection (dry run), dispute
/// timelines, a full chain verification, and the tables' sizes. Run at 1,000,000 and
/// 20,000,000 events to decide whether `events` and `documents` need partitioning.
enum PartitionBench {
    static func run(conninfo: String, appendSeconds: Double, disputes: Int) async throws {
        var logger = Logger(label: "bench.partition")
        logger.logLevel = .error
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 10, logger: logger)
        let store = EventStore(pool: pool, logger: logger)
        let events = try await store.headPosition()
        let sizes = try await LedgerReads(pool: pool).logTableSizes().map { size in
            "\(size.table): \(size.rows) rows, heap \(size.heapBytes >> 20) MB, indexes \(size.indexBytes >> 20) MB"
        }
        // Appends first, while the caches hold what a live server's would.
        let rate = try await StoreBench.appends(store: store, callers: 8, seconds: appendSeconds, type: "BenchAppended")
        let verifyStarted = ContinuousClock.now
        let outcome = try await ChainVerifier(pool: pool).verify()
        let verifySeconds = (ContinuousClock.now - verifyStarted).seconds
        guard case .verified(let checked, _) = outcome else { throw BenchError("the chain does not verify: \(outcome)") }
        await pool.close()
        let rebuild = try await ProjectionReplay(conninfo: conninfo, clock: .system, logger: logger).run(dryRun: true)
        print("events \(events)")
        for line in sizes { print(line) }
        print(String(format: "appends, 8 callers, %.0f s: %.0f events/s", appendSeconds, rate))
        print(String(format: "verify: %lld events in %.1f s, %.0f events/s", checked, verifySeconds, Double(checked) / verifySeconds))
        print(String(format: "rebuild (replay --dry-run): %.0f events/s", Double(rebuild.events) / rebuild.rebuilt.seconds))
        try await ReplayBench.dispute(conninfo: conninfo, reads: disputes, label: "dispute timelines")
    }
}
