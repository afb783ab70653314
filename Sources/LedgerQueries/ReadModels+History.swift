import Ledger
import LedgerProjections
import LedgerStore
import Postgres

/// The reports of finance over time, read from the projections that keep history: every
/// subscription's transactions (`projection_subscription_entries`), every renewal state Apple
/// signed (`projection_renewal_observations`) and the revenue lines. Each figure is computed by
/// `Ledger`'s pure rules (`SubscriptionHistory`, `SubscriptionMetrics`, `CohortMetrics`,
/// `RefundMetrics`), which the tests check against a model of their own.
///
/// Every report is counted inside the closure that read its rows, on the pool's own threads: at
/// 20,000,000 events a year's figures take a second of CPU, which must not hold one of the
/// cooperative pool's few threads (docs/benchmarks.md, "2026-11-29, late night").
extension ReadModels {
    /// The report and, when `listing` names a figure and a period, the original transaction ids
    /// behind it (nil when the report has no such period), from one read of the rows.
    public func subscriptionsReport(
        _ query: HistoryQuery, listing: (figure: SubscriptionMetrics.Figure, period: String)? = nil
    ) async throws -> (report: SubscriptionMetrics, originals: [String]?) {
        try await mappingDatabaseErrors {
            try await withConsistentConnection { [legacy] connection in
                let legacyApp = try legacy.name(on: connection)
                // The sums answer the figures; a list of subscriptions needs their histories.
                if listing == nil, let points = try Self.summedPoints(query, legacyApp: legacyApp, on: connection) {
                    return (SubscriptionMetrics(points: points), nil)
                }
                let lives = try Self.lives(query, legacyApp: legacyApp, on: connection)
                let report = SubscriptionMetrics(lives: lives, periods: query.periods)
                return (report, listing.flatMap { SubscriptionMetrics.originals(of: $0.figure, in: $0.period, periods: query.periods, lives: lives) })
            }
        }
    }

    /// The original transaction ids behind one figure of one period, without counting the
    /// report: nil when the query's periods do not include `period`.
    public func subscriptionsFigure(_ figure: SubscriptionMetrics.Figure, in period: String, _ query: HistoryQuery) async throws -> [String]? {
        try await mappingDatabaseErrors {
            try await withConsistentConnection { [legacy] connection in
                let lives = try Self.lives(query, legacyApp: try legacy.name(on: connection), on: connection)
                return SubscriptionMetrics.originals(of: figure, in: period, periods: query.periods, lives: lives)
            }
        }
    }

    public func cohortsReport(_ query: HistoryQuery) async throws -> CohortMetrics {
        try await mappingDatabaseErrors {
            try await withConsistentConnection { [legacy] connection in
                let lives = try Self.lives(query, legacyApp: try legacy.name(on: connection), on: connection)
                let money = try Self.subscriptionMoney(query, of: Set(lives.map(\.originalTransactionId)), on: connection)
                return CohortMetrics(lives: lives, money: money, months: query.months)
            }
        }
    }

    public func refundsReport(_ query: HistoryQuery) async throws -> RefundMetrics {
        let periods = query.periods
        guard let first = periods.first, let last = periods.last else { return RefundMetrics(lines: [], periods: []) }
        return try await mappingDatabaseErrors {
            try await withConsistentConnection { [legacy] connection in
                let app: SQL = "coalesce(bundle_id, \(try legacy.name(on: connection)))"
                let lines = try connection.query("""
                    SELECT line_type, original_transaction_id, (day - DATE '1970-01-01')::bigint * 86400000, currency, gross_minor
                    FROM projection_revenue_lines
                    WHERE environment = \(query.environment)
                      AND day >= DATE '1970-01-01' + (\(first.startMs / 86_400_000)::bigint)::integer
                      AND day < DATE '1970-01-01' + (\(last.endMs / 86_400_000)::bigint)::integer
                      AND (\(query.bundleId)::text IS NULL OR \(fragment: app) = \(query.bundleId))
                      AND (\(query.productId)::text IS NULL OR product_id = \(query.productId))
                    """).map { row in
                    RevenueLineFact(
                        kind: RevenueLineFact.Kind(rawValue: try row.decode(0)) ?? .sale, originalTransactionId: try row.decode(1),
                        dayMs: try row.decode(2), money: Money(minorUnits: try row.decode(4), currency: try row.decode(3)))
                }
                return RefundMetrics(lines: lines, periods: periods)
            }
        }
    }

    /// Every subscription in the query's environment and app with its history; with a product
    /// asked for, each history cut to the intervals of that product.
    public func subscriptionLives(_ query: HistoryQuery) async throws -> [SubscriptionLife] {
        try await mappingDatabaseErrors {
            try await withConsistentConnection { [legacy] connection in
                try Self.lives(query, legacyApp: try legacy.name(on: connection), on: connection)
            }
        }
    }

    static func lives(_ query: HistoryQuery, legacyApp: String, on connection: Connection) throws -> [SubscriptionLife] {
        try SubscriptionHistories(
            environment: query.environment, bundleId: query.bundleId, originals: nil, commission: query.commission, legacyApp: legacyApp,
            on: connection
        ).cut(to: query.productId)
    }

    /// The sales, refunds and reversals of the subscriptions `originals`, of the query's product if one.
    static func subscriptionMoney(_ query: HistoryQuery, of originals: Set<String>, on connection: Connection) throws -> [SubscriptionMoney] {
        var out: [SubscriptionMoney] = []
        for row in try connection.query("""
            SELECT original_transaction_id, (day - DATE '1970-01-01')::bigint * 86400000, currency, gross_minor
            FROM projection_revenue_lines
            WHERE kind = 'auto_renewable' AND environment = \(query.environment)
              AND (\(query.productId)::text IS NULL OR product_id = \(query.productId))
            """) {
            let original: String = try row.decode(0)
            guard originals.contains(original) else { continue }
            out.append(SubscriptionMoney(
                originalTransactionId: original, dayMs: try row.decode(1), money: Money(minorUnits: try row.decode(3), currency: try row.decode(2))))
        }
        return out
    }
}
