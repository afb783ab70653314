import EventStore
import Foundation
import LedgerProjections
import LedgerQueries
import Logging
import Postgres

/// `Tools/bench apps`: the revenue report on a log `replay-grow` made (its sales spread over
/// `BENCH_APPS` apps), read `reads` times by day over the whole log and as many by app, through
/// the read models as `GET /v1/reports/revenue` reads it, the projections caught up first.
/// Returns "DAY_P50 DAY_P99 APP_P50 APP_P99 ROWS_BY_DAY" (milliseconds; rows of one answer).
enum RevenueBench {
    static func run(conninfo: String, reads count: Int) async throws -> String {
        var logger = Logger(label: "bench.revenue")
        logger.logLevel = .error
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 2, logger: logger)
        let runner = ProjectionRunner(store: EventStore(pool: pool, logger: logger), conninfo: conninfo, pageSize: 2_000, logger: logger)
        try await runner.catchUp()
        let reads = ReadModels(runner: runner, timeout: .seconds(30), clock: .fixed(0))
        // The grown log's sales start on 2026-01-01 and run a minute apart: a year holds them.
        let byDay = try RevenueQuery(from: "2026-01-01", to: "2026-12-31", groupBy: .day)
        let byApp = try RevenueQuery(from: "2026-01-01", to: "2026-12-31", groupBy: .app)
        var days: [Duration] = [], apps: [Duration] = []
        var rows = 0
        // Alternating, so neither kind is read only from pages the other brought in.
        for _ in 0..<count {
            var started = ContinuousClock.now
            rows = try await reads.revenue(byDay).rows.count
            days.append(ContinuousClock.now - started)
            started = ContinuousClock.now
            _ = try await reads.revenue(byApp)
            apps.append(ContinuousClock.now - started)
        }
        await pool.close()
        let (d50, d99) = ReadBench.percentiles(days), (a50, a99) = ReadBench.percentiles(apps)
        return String(format: "%.2f %.2f %.2f %.2f %d", d50, d99, a50, a99, rows)
    }
}
