import EventStore
import Foundation
import Ledger
import LedgerProjections
import LedgerQueries
import LedgerStore
import Logging
import Postgres

/// `Tools/bench history`: on a log `replay-grow` made (with `BENCH_OBSERVATIONS=1`), the
/// subscription_history projection's rebuild beside its fold-only floor, the history sums'
/// first fill, and the subscriptions report for a year by day and by month from the sums, with
/// 1,000 subscriptions not summed yet, and by counting every history as it did before the sums.
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
        // The sums the report reads (migration 0035): every subscription was marked as the
        // runner applied the log; the summarizer sums them as `serve` does, a batch a transaction.
        let summarizer = HistorySummarizer(pool: pool, commission: .standard, logger: logger)
        let started = ContinuousClock.now
        let summed = try await summarizer.drain()
        let fill = (ContinuousClock.now - started).seconds
        let sums = try await pool.withConnection { try $0.query("SELECT count(*) FROM history_contributions")[0].decode(0, as: Int64.self) }
        print(String(format: "history sums: %d subscriptions marked, summed in %.1f s (%.0f a second), %d rows", summed, fill, Double(summed) / fill, sums))
        for (label, interval) in [("a year by day", ReportPeriod.Interval.day), ("a year by month", .month)] {
            let query = try HistoryQuery(from: "2026-01-01", to: "2026-12-31", interval: interval)
            let summedPoints = try await times(requests) {
                let report = try await reads.subscriptionsReport(query).report
                guard report.points.contains(where: { $0.active > 0 }) else { throw BenchError("the report counted nothing") }
            }
            // With 1,000 subscriptions marked and not summed yet (a burst the summarizer has not
            // reached): the report corrects the sums for them.
            try await pool.withConnection { connection in
                _ = try connection.execute("INSERT INTO history_dirty SELECT original_transaction_id FROM history_subscriptions ORDER BY md5(original_transaction_id) LIMIT 1000")
            }
            let corrected = try await times(requests) { _ = try await reads.subscriptionsReport(query) }
            try await summarizer.drain()
            // Beside them, what the report did before the sums: every history read and counted.
            let counted = try await times(max(1, min(requests, 5))) {
                _ = SubscriptionMetrics(lives: try await reads.subscriptionLives(query), periods: query.periods)
            }
            print(String(
                format: "subscriptions report, %@: p50 %.1f ms, p99 %.1f ms over %d reads; with 1,000 subscriptions not summed yet p50 %.1f ms, p99 %.1f ms; every history counted (before the sums) p50 %.0f ms, p99 %.0f ms",
                label, percentile(summedPoints, 50), percentile(summedPoints, 99), requests, percentile(corrected, 50), percentile(corrected, 99),
                percentile(counted, 50), percentile(counted, 99)))
        }
        await pool.close()
    }

    /// Each call's milliseconds.
    static func times(_ count: Int, _ body: () async throws -> Void) async throws -> [Double] {
        var out: [Double] = []
        for _ in 0..<count {
            let started = ContinuousClock.now
            try await body()
            out.append((ContinuousClock.now - started).seconds * 1_000)
        }
        return out
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func percentile(_ values: [Double], _ p: Int) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, sorted.count * p / 100)]
    }
}
