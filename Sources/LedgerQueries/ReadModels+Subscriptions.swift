import AppStore
import Foundation
import Ledger
import LedgerProjections
import LedgerStore
import Postgres

/// Every subscription of one environment with its status, the figures finance asks for (active,
/// trials, grace period, billing retry, MRR per currency, churned and reactivated per month,
/// commitments and the committed value still to come) and the lists behind each. Statuses come
/// from `SubscriptionSummary`, the rule `GET /v1/subscriptions/{id}` uses, so a screen and the
/// API never disagree.
public struct SubscriptionOverview: Sendable {
    public struct Item: Sendable, Hashable {
        public var originalTransactionId: String
        /// The app it was sold in.
        public var bundleId: String
        public var productId: String
        public var userId: String
        public var status: SubscriptionSummary.Status
        public var expiresAtMs: Int64?
        public var inTrial: Bool
        public var autoRenew: Bool?
        /// The latest paid period's price as a month's worth, with its currency (a commitment's
        /// monthly instalment as it is: `SubscriptionSummary.monthly`); nil in a trial.
        public var monthly: Money?
        /// Where its commitment stands, when its latest transaction is an instalment of one.
        public var commitment: SubscriptionSummary.CommitmentStanding?
        public var lapses: [SubscriptionLapses.Lapse]
    }

    public var environment: String
    public var items: [Item]

    public var active: [Item] { items.filter { $0.status == .active } }
    public var trials: [Item] { items.filter { $0.status == .active && $0.inTrial } }
    public var inGracePeriod: [Item] { items.filter { $0.status == .inGracePeriod } }
    public var inBillingRetry: [Item] { items.filter { $0.status == .inBillingRetry } }
    /// Active paid subscriptions (not in a trial, not in grace or retry: not paid for now).
    public var paying: [Item] { items.filter { $0.status == .active && !$0.inTrial && $0.monthly != nil } }

    /// Monthly recurring revenue per currency, in minor units, never added across currencies.
    public var mrr: [Money] {
        var sums: [String: Int64] = [:]
        for item in paying { if let m = item.monthly { sums[m.currency, default: 0] += m.minorUnits } }
        return sums.keys.sorted().map { Money(minorUnits: sums[$0]!, currency: $0) }
    }

    /// Subscriptions whose latest transaction is an instalment of a commitment and that have not
    /// ended (active, in grace period or in billing retry): the commitments still running.
    public var committed: [Item] {
        items.filter { $0.commitment != nil && [.active, .inGracePeriod, .inBillingRetry].contains($0.status) }
    }

    /// The committed value still to come per currency, in minor units: over `committed`, each
    /// latest instalment × the instalments left (n − k); never added across currencies.
    public var committedStillToCome: [Money] {
        var sums: [String: Int64] = [:]
        for item in committed { if let m = item.commitment?.stillToCome { sums[m.currency, default: 0] += m.minorUnits } }
        return sums.keys.sorted().map { Money(minorUnits: sums[$0]!, currency: $0) }
    }

    /// `YYYY-MM` (UTC) → the subscriptions that churned, or came back, that month.
    public var churnedByMonth: [String: [Item]] { byMonth { $0.lapses.map(\.churnedAtMs) } }
    public var reactivatedByMonth: [String: [Item]] { byMonth { $0.lapses.compactMap(\.reactivatedAtMs) } }

    private func byMonth(_ instants: (Item) -> [Int64]) -> [String: [Item]] {
        var out: [String: [Item]] = [:]
        for item in items {
            for month in Set(instants(item).map { String(RevenueDay.of($0).prefix(7)) }) { out[month, default: []].append(item) }
        }
        return out
    }
}

extension ReadModels {
    /// `bundleId`: one app's subscriptions only; nil: every app's.
    public func subscriptionOverview(environment: String, bundleId: String? = nil) async throws -> SubscriptionOverview {
        try await mappingDatabaseErrors {
            let now = clock()
            return try await withConsistentConnection { [legacy] connection in
                let app: SQL = "coalesce(bundle_id, \(try legacy.name(on: connection)))"
                var owners: [String: (user: String, product: String, app: String)] = [:]
                for row in try connection.query("""
                    SELECT original_transaction_id, user_id, product_id, \(fragment: app) FROM projection_entitlements
                    WHERE kind = 'auto_renewable' AND environment = \(environment)
                      AND (\(bundleId)::text IS NULL OR \(fragment: app) = \(bundleId))
                    """) {
                    owners[try row.decode(0)] = (try row.decode(1), try row.decode(2), try row.decode(3))
                }
                var entries: [String: [SubscriptionEntry]] = [:]
                for row in try connection.query("""
                    SELECT original_transaction_id, transaction_id, product_id, purchase_date_ms, expires_date_ms, cancellation_date_ms,
                           is_trial, is_upgraded, billing_plan_type, commitment_period_number, commitment_total_periods,
                           commitment_price_milliunits, commitment_expires_ms, price_milliunits, currency
                    FROM projection_subscription_entries WHERE environment = \(environment)
                    """) {
                    entries[try row.decode(0), default: []].append(try SubscriptionSummaries.entry(row, from: 1))
                }
                var renewals: [String: RenewalObservation] = [:]
                for row in try connection.query("""
                    SELECT r.original_transaction_id, r.observed_at_ms, r.auto_renew, r.auto_renew_product_id, r.in_billing_retry,
                           r.grace_period_expires_ms
                    FROM projection_subscription_renewals r JOIN projection_entitlements e USING (original_transaction_id)
                    WHERE e.environment = \(environment)
                    """) {
                    renewals[try row.decode(0)] = RenewalObservation(
                        observedAtMs: try row.decode(1), autoRenew: try row.decode(2), autoRenewProductId: try row.decode(3),
                        inBillingRetry: try row.decode(4), gracePeriodExpiresMs: try row.decode(5))
                }
                // The price of each subscription's latest paid period, and the period's length.
                var sales: [String: (gross: Money, serviceMs: Int64)] = [:]
                for row in try connection.query("""
                    SELECT DISTINCT ON (original_transaction_id) original_transaction_id, currency, gross_minor, service_ms
                    FROM projection_revenue_lines
                    WHERE line_type = 'sale' AND kind = 'auto_renewable' AND environment = \(environment) AND service_ms > 0
                    ORDER BY original_transaction_id, purchase_date_ms DESC
                    """) {
                    sales[try row.decode(0)] = (Money(minorUnits: try row.decode(2), currency: try row.decode(1)), try row.decode(3))
                }
                var items: [SubscriptionOverview.Item] = []
                for (original, owner) in owners {
                    let list = entries[original] ?? []
                    guard let summary = SubscriptionSummary(entries: list, renewal: renewals[original], nowMs: now) else { continue }
                    items.append(.init(
                        originalTransactionId: original, bundleId: owner.app, productId: summary.productId, userId: owner.user, status: summary.status,
                        expiresAtMs: summary.expiresAtMs, inTrial: summary.inTrial, autoRenew: summary.autoRenew,
                        monthly: summary.monthly(latestSale: sales[original]?.gross, serviceMs: sales[original]?.serviceMs),
                        commitment: summary.commitment,
                        lapses: SubscriptionLapses.lapses(of: list, status: summary.status, nowMs: now)))
                }
                items.sort { $0.originalTransactionId < $1.originalTransactionId }
                return SubscriptionOverview(environment: environment, items: items)
            }
        }
    }
}
