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
                let report = SubscriptionMetrics(lives: try Self.lives(query, legacyApp: try legacy.name(on: connection), on: connection), periods: query.periods)
                return (report, listing.flatMap { report.originals(of: $0.figure, in: $0.period) })
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
        let app: SQL = "coalesce(bundle_id, \(legacyApp))"
        var owners: [String: String] = [:]
        for row in try connection.query("""
            SELECT original_transaction_id, user_id FROM projection_entitlements
            WHERE kind = 'auto_renewable' AND environment = \(query.environment)
              AND (\(query.bundleId)::text IS NULL OR \(fragment: app) = \(query.bundleId))
            """) {
            owners[try row.decode(0)] = try row.decode(1)
        }
        var entries: [String: [SubscriptionEntry]] = [:]
        for row in try connection.query("""
            SELECT original_transaction_id, transaction_id, product_id, purchase_date_ms, expires_date_ms, cancellation_date_ms,
                   is_trial, is_upgraded, billing_plan_type, commitment_period_number, commitment_total_periods,
                   commitment_price_milliunits, commitment_expires_ms, price_milliunits, currency
            FROM projection_subscription_entries WHERE environment = \(query.environment)
            """) {
            let original: String = try row.decode(0)
            guard owners[original] != nil else { continue }
            entries[original, default: []].append(try SubscriptionSummaries.entry(row, from: 1))
        }
        var observations: [String: [RenewalObservation]] = [:]
        for row in try connection.query("""
            SELECT original_transaction_id, observed_at_ms, in_billing_retry, grace_period_expires_ms FROM projection_renewal_observations
            """) {
            let original: String = try row.decode(0)
            guard owners[original] != nil else { continue }
            let retry: Int64 = try row.decode(2)
            let grace: Int64 = try row.decode(3)
            observations[original, default: []].append(RenewalObservation(
                observedAtMs: try row.decode(1), autoRenew: nil, autoRenewProductId: nil,
                inBillingRetry: retry < 0 ? nil : retry == 1, gracePeriodExpiresMs: grace == 0 ? nil : grace))
        }
        // Each paid transaction's price: net of tax where a price point says the tax, else gross.
        var sales: [String: (price: Money, serviceMs: Int64?)] = [:]
        for row in try connection.query("""
            SELECT transaction_id, currency, gross_minor - \(fragment: RevenueLineMoney.tax(query.commission)), service_ms
            FROM projection_revenue_lines
            WHERE line_type = 'sale' AND kind = 'auto_renewable' AND environment = \(query.environment)
            """) {
            let transaction: String = try row.decode(0)
            sales[transaction] = (Money(minorUnits: try row.decode(2), currency: try row.decode(1)), try row.decode(3))
        }
        var lives: [SubscriptionLife] = []
        for (original, user) in owners {
            let intervals = SubscriptionHistory.intervals(entries: entries[original] ?? [], observations: observations[original] ?? []) { entry in
                let sale = sales[entry.transactionId]
                return SubscriptionHistory.monthly(entry, sale: sale?.price, serviceMs: sale?.serviceMs)
            }
            let kept = query.productId.map { product in intervals.filter { $0.productId == product } } ?? intervals
            guard !kept.isEmpty else { continue }
            lives.append(SubscriptionLife(originalTransactionId: original, userId: user, intervals: kept))
        }
        return lives.sorted { $0.originalTransactionId < $1.originalTransactionId }
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
