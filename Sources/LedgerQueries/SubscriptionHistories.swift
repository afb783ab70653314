import Ledger
import LedgerProjections
import Postgres

/// Subscriptions' histories read from the projections that keep them: who holds each and in
/// which app (`projection_entitlements`), its transactions (`projection_subscription_entries`),
/// every renewal state Apple signed (`projection_renewal_observations`) and each paid
/// transaction's price (`projection_revenue_lines`). What the reports count on demand and the
/// history summarizer sums (`HistoryContributions`): one reader, so the two cannot disagree.
struct SubscriptionHistories {
    /// Whose it is: the entitlement's environment, its app (the legacy app where the row names
    /// none) and its user.
    struct Owner: Sendable, Hashable {
        var environment: String
        var bundleId: String
        var userId: String
    }

    /// Every product's intervals.
    var lives: [(owner: Owner, life: SubscriptionLife)]

    /// The subscriptions of `environment` (every one when nil) and `bundleId` (every app when
    /// nil), or only those of `originals`, with prices net of tax under `commission` where a
    /// price point says the tax.
    init(
        environment: String?, bundleId: String?, originals: [String]?, commission: CommissionPlan, legacyApp: String,
        on connection: Connection
    ) throws {
        let app: SQL = "coalesce(bundle_id, \(legacyApp))"
        let only = originals.map { PostgresArray($0.map { Optional($0) }) }
        // Given originals, each table is read by its key; else whole (a report of every subscription).
        let chosen: SQL = only.map { "original_transaction_id = ANY(\($0))" } ?? "true"
        var owners: [String: Owner] = [:]
        for row in try connection.query("""
            SELECT original_transaction_id, user_id, environment, \(fragment: app) FROM projection_entitlements
            WHERE kind = 'auto_renewable' AND \(fragment: chosen)
              AND (\(environment)::text IS NULL OR environment = \(environment))
              AND (\(bundleId)::text IS NULL OR \(fragment: app) = \(bundleId))
            """) {
            owners[try row.decode(0)] = Owner(environment: try row.decode(2), bundleId: try row.decode(3), userId: try row.decode(1))
        }
        var entries: [String: [SubscriptionEntry]] = [:]
        for row in try connection.query("""
            SELECT original_transaction_id, environment, transaction_id, product_id, purchase_date_ms, expires_date_ms, cancellation_date_ms,
                   is_trial, is_upgraded, billing_plan_type, commitment_period_number, commitment_total_periods,
                   commitment_price_milliunits, commitment_expires_ms, price_milliunits, currency
            FROM projection_subscription_entries
            WHERE \(fragment: chosen) AND (\(environment)::text IS NULL OR environment = \(environment))
            """) {
            let original: String = try row.decode(0)
            guard let owner = owners[original], owner.environment == (try row.decode(1) as String) else { continue }
            entries[original, default: []].append(try SubscriptionSummaries.entry(row, from: 2))
        }
        var observations: [String: [RenewalObservation]] = [:]
        for row in try connection.query("""
            SELECT original_transaction_id, observed_at_ms, in_billing_retry, grace_period_expires_ms FROM projection_renewal_observations
            WHERE \(fragment: chosen)
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
            SELECT transaction_id, currency, gross_minor - \(fragment: RevenueLineMoney.tax(commission)), service_ms, original_transaction_id, environment
            FROM projection_revenue_lines
            WHERE line_type = 'sale' AND kind = 'auto_renewable' AND \(fragment: chosen)
              AND (\(environment)::text IS NULL OR environment = \(environment))
            """) {
            guard let owner = owners[try row.decode(4)], owner.environment == (try row.decode(5) as String) else { continue }
            let transaction: String = try row.decode(0)
            sales[transaction] = (Money(minorUnits: try row.decode(2), currency: try row.decode(1)), try row.decode(3))
        }
        var lives: [(owner: Owner, life: SubscriptionLife)] = []
        for (original, owner) in owners {
            let intervals = SubscriptionHistory.intervals(entries: entries[original] ?? [], observations: observations[original] ?? []) { entry in
                let sale = sales[entry.transactionId]
                return SubscriptionHistory.monthly(entry, sale: sale?.price, serviceMs: sale?.serviceMs)
            }
            guard !intervals.isEmpty else { continue }
            lives.append((owner, SubscriptionLife(originalTransactionId: original, userId: owner.userId, intervals: intervals)))
        }
        self.lives = lives.sorted { $0.life.originalTransactionId < $1.life.originalTransactionId }
    }

    /// The lives as a report of `productId` reads them: with a product, each cut to the
    /// intervals of that product, and those left with none dropped.
    func cut(to productId: String?) -> [SubscriptionLife] {
        guard let productId else { return lives.map(\.life) }
        return lives.compactMap { entry in
            let kept = entry.life.intervals.filter { $0.productId == productId }
            guard !kept.isEmpty else { return nil }
            var life = entry.life
            life.intervals = kept
            return life
        }
    }
}
