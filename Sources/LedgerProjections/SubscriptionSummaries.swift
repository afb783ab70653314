import Ledger
import Postgres

/// Subscriptions' states read from the subscription projection's tables: the rule of
/// `SubscriptionSummary` (in `Ledger`) over the rows this module writes. Shared by the reads
/// and by a replay's comparison, so both name a subscription's state the same way.
public enum SubscriptionSummaries {
    /// The summary of one subscription; nil when the ledger holds none.
    public static func read(_ original: String, on connection: Connection, now: Int64) throws -> SubscriptionSummary? {
        try read(of: [original], on: connection, now: now)[original]
    }

    /// The summaries of several subscriptions in two queries; absent ones are left out.
    public static func read(of originals: [String], on connection: Connection, now: Int64) throws -> [String: SubscriptionSummary] {
        let ids = PostgresArray(originals.map(Optional.some))
        var entries: [String: [SubscriptionEntry]] = [:]
        for row in try connection.query(.prepared("""
            SELECT original_transaction_id, transaction_id, product_id, purchase_date_ms, expires_date_ms, cancellation_date_ms,
                   is_trial, is_upgraded, billing_plan_type, commitment_period_number, commitment_total_periods,
                   commitment_price_milliunits, commitment_expires_ms, price_milliunits, currency
            FROM projection_subscription_entries WHERE original_transaction_id = ANY(\(ids)::text[])
            """)) {
            entries[try row.decode(0), default: []].append(try entry(row, from: 1))
        }
        var renewals: [String: RenewalObservation] = [:]
        for row in try connection.query(.prepared("""
            SELECT original_transaction_id, observed_at_ms, auto_renew, auto_renew_product_id, in_billing_retry, grace_period_expires_ms
            FROM projection_subscription_renewals WHERE original_transaction_id = ANY(\(ids)::text[])
            """)) {
            renewals[try row.decode(0)] = RenewalObservation(
                observedAtMs: try row.decode(1), autoRenew: try row.decode(2), autoRenewProductId: try row.decode(3),
                inBillingRetry: try row.decode(4), gracePeriodExpiresMs: try row.decode(5))
        }
        var summaries: [String: SubscriptionSummary] = [:]
        for original in originals {
            if let summary = SubscriptionSummary(entries: entries[original] ?? [], renewal: renewals[original], nowMs: now) {
                summaries[original] = summary
            }
        }
        return summaries
    }

    /// A subscription entry from a row of `projection_subscription_entries` whose columns, from
    /// `first` on, are: transaction_id, product_id, purchase_date_ms, expires_date_ms,
    /// cancellation_date_ms, is_trial, is_upgraded, billing_plan_type, commitment_period_number,
    /// commitment_total_periods, commitment_price_milliunits, commitment_expires_ms,
    /// price_milliunits, currency. Every reader of the table decodes its rows here.
    public static func entry(_ row: PostgresRow, from first: Int) throws -> SubscriptionEntry {
        SubscriptionEntry(
            transactionId: try row.decode(first), productId: try row.decode(first + 1), purchaseDateMs: try row.decode(first + 2),
            expiresDateMs: try row.decode(first + 3), cancellationDateMs: try row.decode(first + 4), isTrial: try row.decode(first + 5),
            isUpgraded: try row.decode(first + 6), billingPlanType: try row.decode(first + 7),
            commitment: Commitment.of(
                periodNumber: try row.decode(first + 8), totalPeriods: try row.decode(first + 9),
                priceMilliunits: try row.decode(first + 10), expiresDateMs: try row.decode(first + 11)),
            priceMilliunits: try row.decode(first + 12), currency: try row.decode(first + 13))
    }
}
