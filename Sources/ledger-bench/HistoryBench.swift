import EventStore
import Foundation
import Ledger
import LedgerProjections
import LedgerQueries
import LedgerStore
import Logging
import Postgres

/// `Tools/bench history`: on a log `replay-grow` made (with `BENCH_OBSERVATIONS=1`), the
/// subscription_history projection's rebuild beside its fold-only floor, and the subscriptions
/// report for a year by day and by month, beside the floor of reading its rows alone.
enum HistoryBench {
    static func run(conninfo: String, requests: Int, rounds: Int = 3) async throws {
        let logger = ReplayBench.logger
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 2, logger: logger)
        let runner = ProjectionRunner(store: EventStore(pool: pool, logger: logger), conninfo: conninfo, pageSize: 2_000, logger: logger)
        try await runner.catchUp()
        var rebuilds: [Double] = [], folds: [Double] = [], ratios: [Double] = []
        var events: Int64 = 0
        events = try await EventStore(pool: pool, logger: logger).headPosition()
        for round in 1...max(1, rounds) {
            // As the first `serve` of this release fills it: emptied, its checkpoint at 0, and
            // caught up from the first event by a runner of that projection alone (a rebuild's
            // page size). `replay` rebuilds every projection; `Tools/bench replay` measures that.
            try await pool.withConnection { connection in
                _ = try connection.execute("DELETE FROM projection_renewal_observations")
                _ = try connection.execute("UPDATE projection_checkpoints SET position = 0 WHERE name = 'subscription_history'")
            }
            let alone = ProjectionRunner(
                store: EventStore(pool: pool, logger: logger), conninfo: conninfo, projections: [SubscriptionHistoryProjection()],
                pageSize: ProjectionReplay.defaultPageSize, gatherWait: .zero, logger: logger)
            let started = ContinuousClock.now
            try await alone.catchUp(verifyingChain: false)
            let seconds = (ContinuousClock.now - started).seconds
            let fold = try await ReplayBench.foldRate(store: EventStore(pool: pool, logger: logger), projections: [SubscriptionHistoryProjection()])
            rebuilds.append(Double(events) / seconds)
            folds.append(fold)
            ratios.append(rebuilds.last! / fold)
            FileHandle.standardError.write(Data(String(
                format: "round %d: history rebuild %.0f events/s, its fold only %.0f events/s, %.3f×\n", round, rebuilds.last!, fold, ratios.last!).utf8))
        }
        let reads = ReadModels(runner: runner, timeout: .seconds(120), clock: .fixed(0))
        let observations = try await pool.withConnection { try $0.query("SELECT count(*) FROM projection_renewal_observations")[0].decode(0, as: Int64.self) }
        let subscriptions = try await pool.withConnection {
            try $0.query("SELECT count(DISTINCT original_transaction_id) FROM projection_subscription_entries")[0].decode(0, as: Int64.self)
        }
        print(String(
            format: "history projection at %d events (%d subscriptions, %d renewal states): rebuild %.0f events/s, fold only %.0f events/s, %.3f× (median of %d)",
            events, subscriptions, observations, median(rebuilds), median(folds), median(ratios), rebuilds.count))
        for (label, interval) in [("a year by day", ReportPeriod.Interval.day), ("a year by month", .month)] {
            let query = try HistoryQuery(from: "2026-01-01", to: "2026-12-31", interval: interval)
            var latencies: [Double] = []
            var floor: [Double] = []
            for _ in 0..<requests {
                var started = ContinuousClock.now
                let report = try await reads.subscriptionsReport(query).report
                latencies.append((ContinuousClock.now - started).seconds * 1_000)
                guard report.points.contains(where: { $0.active > 0 }) else { throw BenchError("the report counted nothing") }
                // The floor beside it: the same rows read and turned into histories, nothing counted.
                started = ContinuousClock.now
                _ = try await reads.subscriptionLives(query)
                floor.append((ContinuousClock.now - started).seconds * 1_000)
            }
            print(String(
                format: "subscriptions report, %@: p50 %.0f ms, p99 %.0f ms over %d reads; its rows and histories alone p50 %.0f ms, p99 %.0f ms",
                label, percentile(latencies, 50), percentile(latencies, 99), requests, percentile(floor, 50), percentile(floor, 99)))
        }
        await pool.close()
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func percentile(_ values: [Double], _ p: Int) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, sorted.count * p / 100)]
    }
}
