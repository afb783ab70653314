import Ledger
import Postgres

/// The projections' statements whose effect depends on the rows written before them, so a page
/// applies them one at a time, in log order (`ProjectionBatch` combines all the others).
enum ProjectionSQL {
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

    /// A product's catalog price from `effectiveMs` (when that load was recorded) on.
    static func catalogPrice(_ product: String, _ price: Int64, _ currency: String, effectiveMs: Int64) -> SQL {
        .prepared("""
        INSERT INTO projection_revenue_prices (product_id, effective_ms, price_minor, currency)
        VALUES (\(product), \(effectiveMs), \(price), \(currency))
        ON CONFLICT (product_id, effective_ms) DO UPDATE SET price_minor = excluded.price_minor, currency = excluded.currency
        """)
    }

    /// A sale without Apple's price takes the catalog's as it stood at the purchase: the last
    /// load recorded at or before it, else (history older than any catalog) the first load
    /// after it, among the loads the log has at this point (pages apply in log order).
    ///
    /// Its reduced rate depends on the paid service of the subscription's earlier sales. A sale
    /// may arrive after later ones (Apple's lists are not sorted; clients post out of order):
    /// their lines, refunds included, are rated again with it counted, so the rates come out
    /// the same in any order of arrival.
    static func revenueSale(_ sale: RevenueSale) -> SQL {
        let year = CommissionPlan.yearOfServiceMs
        let insert: SQL = """
        INSERT INTO projection_revenue_lines
            (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
             purchase_date_ms, service_ms, currency, gross_minor, reduced_rate)
        SELECT 'sale:' || \(sale.transactionId), 'sale', \(sale.transactionId), \(sale.originalTransactionId), \(sale.productId),
               \(sale.kind.rawValue), \(sale.userId), \(sale.environment), \(sale.day)::date, \(sale.purchaseDateMs), \(sale.serviceMs),
               coalesce(\(sale.applePrice?.currency)::text, p.currency),
               coalesce(\(sale.applePrice?.minorUnits)::bigint, p.price_minor * \(sale.quantity)),
               \(sale.kind == .autoRenewable) AND (
                   SELECT coalesce(sum(service_ms), 0) FROM projection_revenue_lines e
                   WHERE e.original_transaction_id = \(sale.originalTransactionId) AND e.line_type = 'sale'
                     AND e.purchase_date_ms < \(sale.purchaseDateMs)) >= \(year)
        FROM (SELECT 1) AS one LEFT JOIN LATERAL (
            SELECT price_minor, currency FROM projection_revenue_prices
            WHERE product_id = \(sale.productId)
            ORDER BY effective_ms <= \(sale.purchaseDateMs) DESC, abs(effective_ms - \(sale.purchaseDateMs))
            LIMIT 1) p ON true
        WHERE coalesce(\(sale.applePrice?.currency)::text, p.currency) IS NOT NULL
        ON CONFLICT (line_id) DO NOTHING
        """
        guard sale.kind == .autoRenewable, let service = sale.serviceMs else { return insert.prepared() }
        // The UPDATE sees the table as it was before the INSERT: the new sale's service is added.
        let rerated: SQL = """
        WITH sale AS (\(fragment: insert) RETURNING 1)
        UPDATE projection_revenue_lines l SET reduced_rate = (
            SELECT coalesce(sum(e.service_ms), 0) FROM projection_revenue_lines e
            WHERE e.original_transaction_id = l.original_transaction_id AND e.line_type = 'sale'
              AND e.purchase_date_ms < l.purchase_date_ms) + \(service) >= \(year)
        WHERE l.original_transaction_id = \(sale.originalTransactionId) AND l.purchase_date_ms > \(sale.purchaseDateMs)
          AND EXISTS (SELECT 1 FROM sale)
        """
        return rerated.prepared()
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
