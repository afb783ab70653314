import Ledger
import Postgres

/// The projections' statements that are more than a plain upsert: renewals (newest wins, by a
/// total order), and those whose effect depends on the rows written before them, which a page
/// applies in log order (revenue lines and prices, unions of Apple accounts; a run of
/// consecutive sales goes as one statement that keeps that order). All of fixed text, prepared.
enum ProjectionSQL {
    /// Newest renewal observation wins; equal times are broken by the row's whole content
    /// (NULLs made comparable), so the result does not depend on which was applied first.
    /// One row per subscription (the page's newest, `ProjectionBatch`), all in one statement.
    static func observeRenewals(_ renewals: [(original: String, renewal: RenewalObservation)]) -> SQL {
        func flags(_ values: [Bool?]) -> PostgresArray { PostgresArray(values.map { $0.map { $0 ? "t" : "f" } }) }
        let rows = renewals.map(\.renewal)
        return .prepared("""
        INSERT INTO projection_subscription_renewals
            (original_transaction_id, observed_at_ms, auto_renew, auto_renew_product_id, in_billing_retry, grace_period_expires_ms)
        SELECT * FROM unnest(\(PostgresArray(renewals.map { Optional($0.original) }))::text[],
                             \(PostgresArray(rows.map { Optional($0.observedAtMs) }))::bigint[], \(flags(rows.map(\.autoRenew)))::boolean[],
                             \(PostgresArray(rows.map(\.autoRenewProductId)))::text[], \(flags(rows.map(\.inBillingRetry)))::boolean[],
                             \(PostgresArray(rows.map(\.gracePeriodExpiresMs)))::bigint[])
        ON CONFLICT (original_transaction_id) DO UPDATE SET
            observed_at_ms = excluded.observed_at_ms, auto_renew = excluded.auto_renew,
            auto_renew_product_id = excluded.auto_renew_product_id, in_billing_retry = excluded.in_billing_retry,
            grace_period_expires_ms = excluded.grace_period_expires_ms
        WHERE (excluded.observed_at_ms, coalesce(excluded.auto_renew::text, ''), coalesce(excluded.in_billing_retry::text, ''),
               coalesce(excluded.auto_renew_product_id, ''), coalesce(excluded.grace_period_expires_ms, -1))
            > (projection_subscription_renewals.observed_at_ms, coalesce(projection_subscription_renewals.auto_renew::text, ''),
               coalesce(projection_subscription_renewals.in_billing_retry::text, ''),
               coalesce(projection_subscription_renewals.auto_renew_product_id, ''),
               coalesce(projection_subscription_renewals.grace_period_expires_ms, -1))
        """)
    }

    /// Unites the groups of `originals` (and of every member sharing `appTransactionId`) in the
    /// union-find of Apple accounts, rooted at the group's smallest original_transaction_id, so
    /// groups and names come out the same in any order. Nil when there is nothing to unite.
    static func uniteAppleAccount(_ originals: [String], appTransactionId: String?) -> SQL? {
        guard originals.count > 1 || appTransactionId != nil else { return nil }
        let ids = PostgresArray(originals.map(Optional.some))
        return .prepared("""
        WITH joined AS (
            SELECT DISTINCT root FROM projection_apple_account_members
            WHERE original_transaction_id = ANY(\(ids)::text[])
               OR (\(appTransactionId)::text IS NOT NULL AND app_transaction_id = \(appTransactionId)))
        UPDATE projection_apple_account_members SET root = (SELECT min(root) FROM joined)
        WHERE root IN (SELECT root FROM joined) AND root <> (SELECT min(root) FROM joined)
        """)
    }

    static func catalogPrice(_ product: String, _ price: Int64, _ currency: String) -> SQL {
        .prepared("""
        INSERT INTO projection_revenue_prices (product_id, price_minor, currency) VALUES (\(product), \(price), \(currency))
        ON CONFLICT (product_id) DO UPDATE SET price_minor = excluded.price_minor, currency = excluded.currency
        """)
    }

    /// Consecutive sales of a page as one statement, with the rows one `revenueSale` per sale
    /// in log order would give: a sale is written unless its line exists or it has no price, and
    /// its reduced rate counts the subscription's lines written before it, those already in the
    /// table and those of this statement earlier in the log (`ord`). The catalog prices cannot
    /// change within it: the batch ends at every other ordered statement.
    static func revenueSales(_ sales: [RevenueSale]) -> SQL {
        func texts(_ values: [String?]) -> PostgresArray { PostgresArray(values) }
        func integers(_ values: [Int64?]) -> PostgresArray { PostgresArray(values) }
        let renewable = PostgresArray(sales.map { Optional($0.kind == .autoRenewable ? "t" : "f") })
        return .prepared("""
        WITH b AS (
            SELECT * FROM unnest(
                \(texts(sales.map(\.transactionId)))::text[], \(texts(sales.map(\.originalTransactionId)))::text[],
                \(texts(sales.map(\.productId)))::text[], \(texts(sales.map(\.kind.rawValue)))::text[],
                \(texts(sales.map(\.userId)))::text[], \(texts(sales.map(\.environment)))::text[], \(texts(sales.map(\.day)))::text[],
                \(integers(sales.map(\.purchaseDateMs)))::bigint[], \(integers(sales.map(\.serviceMs)))::bigint[],
                \(integers(sales.map(\.quantity)))::bigint[], \(texts(sales.map { $0.applePrice?.currency }))::text[],
                \(integers(sales.map { $0.applePrice?.minorUnits }))::bigint[], \(renewable)::boolean[])
            WITH ORDINALITY AS b(tx, original, product, kind, user_id, environment, day, pd, service, qty, apple_currency,
                                 apple_minor, renewable, ord)
        ), priced AS (
            SELECT b.*, coalesce(b.apple_currency, p.currency) AS currency, coalesce(b.apple_minor, p.price_minor * b.qty) AS gross,
                   coalesce(b.apple_currency, p.currency) IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM projection_revenue_lines e WHERE e.line_id = 'sale:' || b.tx)
                   AND b.ord = min(b.ord) OVER (PARTITION BY b.tx) AS written
            FROM b LEFT JOIN projection_revenue_prices p ON p.product_id = b.product
        )
        INSERT INTO projection_revenue_lines
            (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
             purchase_date_ms, service_ms, currency, gross_minor, reduced_rate)
        SELECT 'sale:' || s.tx, 'sale', s.tx, s.original, s.product, s.kind, s.user_id, s.environment, s.day::date, s.pd, s.service,
               s.currency, s.gross,
               s.renewable AND (
                   (SELECT coalesce(sum(service_ms), 0) FROM projection_revenue_lines e
                    WHERE e.original_transaction_id = s.original AND e.line_type = 'sale' AND e.purchase_date_ms < s.pd)
                 + (SELECT coalesce(sum(t.service), 0) FROM priced t
                    WHERE t.written AND t.original = s.original AND t.ord < s.ord AND t.pd < s.pd)) >= \(CommissionPlan.yearOfServiceMs)
        FROM priced s WHERE s.written
        ORDER BY s.ord
        ON CONFLICT (line_id) DO NOTHING
        """)
    }

    static func revenueRefund(_ transaction: String, day: String) -> SQL {
        .prepared("""
        INSERT INTO projection_revenue_lines
            (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
             purchase_date_ms, service_ms, currency, gross_minor, reduced_rate)
        SELECT 'refund:' || transaction_id, 'refund', transaction_id, original_transaction_id, product_id, kind, user_id,
               environment, \(day)::date, purchase_date_ms, NULL, currency, -gross_minor, reduced_rate
        FROM projection_revenue_lines WHERE line_id = 'sale:' || \(transaction)
        ON CONFLICT (line_id) DO NOTHING
        """)
    }
}
