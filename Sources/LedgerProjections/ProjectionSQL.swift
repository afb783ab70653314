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

    /// A product's catalog price in the app `app` from `effectiveMs` (when that load was recorded) on.
    static func catalogPrice(_ app: String, _ product: String, _ price: Int64, _ currency: String, effectiveMs: Int64) -> SQL {
        .prepared("""
        INSERT INTO projection_revenue_catalog_prices (bundle_id, product_id, effective_ms, price_minor, currency)
        VALUES (\(app), \(product), \(effectiveMs), \(price), \(currency))
        ON CONFLICT (bundle_id, product_id, effective_ms) DO UPDATE SET price_minor = excluded.price_minor, currency = excluded.currency
        """)
    }

    /// A sale without Apple's price takes the catalog's as it stood at the purchase: the last
    /// load recorded at or before it, else (history older than any catalog) the first load
    /// after it, among the loads the log has at this point (pages apply in log order). A sale
    /// without Apple's price or storefront takes what Get Transaction Info said of it when the
    /// log recorded that first (``transactionInfo(_:country:applePrice:)``); its country is
    /// `Storefront.unknown` when nothing did.
    ///
    /// Its reduced rate depends on the subscription's paid service before it
    /// (``paidService(of:before:)``). A sale may arrive after later ones (Apple's lists are not
    /// sorted; clients post out of order): a second statement rates the later lines again,
    /// refunds included, so the rates come out the same in any order of arrival.
    static func revenueSales(_ sales: [RevenueSale]) -> [SQL] {
        guard !sales.isEmpty else { return [] }
        let year = CommissionPlan.yearOfServiceMs
        let service = paidService(of: "s.original_transaction_id", before: "s.purchase_date_ms")
        func texts(_ values: [String?]) -> PostgresArray { PostgresArray(values) }
        func integers(_ values: [Int64?]) -> PostgresArray { PostgresArray(values) }
        // One statement for the run of sales (arrays through `unnest`, in log order, so of two
        // sales of one transaction the first stays, as one statement each kept it). A sale is
        // priced in the same statement (the refresh in force and its point, as ``priceLines``
        // does for lines already there).
        let insert: SQL = .prepared("""
        WITH v AS (
            SELECT 'sale:' || s.transaction_id AS line_id, 'sale' AS line_type, s.transaction_id, s.original_transaction_id,
                   s.product_id, s.kind, s.user_id, s.environment, s.day::date AS day, s.purchase_date_ms, s.service_ms,
                   coalesce(s.apple_currency, i.currency, p.currency) AS currency,
                   coalesce(s.apple_minor, i.price_minor, p.price_minor * s.quantity) AS gross_minor,
                   CASE WHEN s.kind = 'auto_renewable' THEN \(fragment: service) >= \(year) ELSE false END AS reduced_rate,
                   greatest(s.quantity, 1) AS quantity,
                   coalesce(s.country, i.country, \(Storefront.unknown)::text) AS country,
                   s.apple_currency IS NOT NULL OR i.price_minor IS NOT NULL AS apple_price, s.offer_id, s.ordinal, s.bundle_id
            FROM unnest(\(texts(sales.map(\.transactionId)))::text[], \(texts(sales.map(\.originalTransactionId)))::text[],
                        \(texts(sales.map(\.productId)))::text[], \(texts(sales.map(\.kind.rawValue)))::text[],
                        \(texts(sales.map(\.userId)))::text[], \(texts(sales.map(\.environment)))::text[],
                        \(texts(sales.map(\.day)))::text[], \(integers(sales.map(\.purchaseDateMs)))::bigint[],
                        \(integers(sales.map(\.serviceMs)))::bigint[], \(texts(sales.map { $0.applePrice?.currency }))::text[],
                        \(integers(sales.map { $0.applePrice?.minorUnits }))::bigint[], \(integers(sales.map(\.quantity)))::bigint[],
                        \(texts(sales.map(\.country)))::text[], \(texts(sales.map(\.offerId)))::text[],
                        \(texts(sales.map { $0.bundleId ?? "" }))::text[])
                 WITH ORDINALITY AS s(transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
                                      purchase_date_ms, service_ms, apple_currency, apple_minor, quantity, country, offer_id, bundle_id,
                                      ordinal)
            LEFT JOIN projection_revenue_transaction_info i ON i.transaction_id = s.transaction_id
            LEFT JOIN LATERAL (
                SELECT price_minor, currency FROM projection_revenue_catalog_prices
                WHERE bundle_id = s.bundle_id AND product_id = s.product_id
                ORDER BY effective_ms <= s.purchase_date_ms DESC, abs(effective_ms - s.purchase_date_ms)
                LIMIT 1) p ON true
            WHERE coalesce(s.apple_currency, i.currency, p.currency) IS NOT NULL)
        INSERT INTO projection_revenue_lines
            (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
             purchase_date_ms, service_ms, currency, gross_minor, reduced_rate, quantity, country, apple_price,
             point_refreshed_at_ms, point_proceeds_minor, point_proceeds_year2_minor, offer_id, bundle_id)
        SELECT v.line_id, v.line_type, v.transaction_id, v.original_transaction_id, v.product_id, v.kind, v.user_id, v.environment, v.day,
               v.purchase_date_ms, v.service_ms, v.currency, v.gross_minor, v.reduced_rate, v.quantity, v.country, v.apple_price,
               r.refreshed, pp.proceeds_minor, pp.proceeds_year2_minor, v.offer_id, v.bundle_id
        FROM v \(fragment: pricePointJoins("v", saleGross: "v.gross_minor"))
        ORDER BY v.ordinal
        ON CONFLICT (line_id) DO NOTHING
        """)
        // Each sale was rated against the lines before the statement, not the run's earlier
        // sales: every line of a subscription from its run's first sale on is rated again,
        // which gives the rates of inserting the sales one at a time, each followed by rating
        // the later lines again.
        var from: [String: Int64] = [:]
        for sale in sales where sale.kind == .autoRenewable && sale.serviceMs != nil {
            from[sale.originalTransactionId] = min(from[sale.originalTransactionId] ?? sale.purchaseDateMs, sale.purchaseDateMs)
        }
        guard !from.isEmpty else { return [insert] }
        let originals = from.keys.sorted()
        return [insert, rerate(originals: originals.map { Optional($0) }, after: originals.map { from[$0].map { $0 - 1 } })]
    }

    /// What Apple's Get Transaction Info said of `transaction`: kept, for a sale line added
    /// later (``revenueSales(_:)``), and applied to the lines already there: those whose country
    /// is unknown take `country`; those the catalog priced take `applePrice`, a refund's or a
    /// reversal's its share of it (`RefundFraction.money`, rounded half up) with the sale's gross
    /// beside it, as if the sale had carried Apple's price from the start. Lines already priced
    /// by Apple or placed in a country keep what Apple signed with the sale.
    static func transactionInfo(_ transaction: String, country: String?, applePrice: Money?) -> [SQL] {
        let lines: SQL = "('sale:' || \(transaction), 'refund:' || \(transaction), 'reversal:' || \(transaction))"
        var statements: [SQL] = [.prepared("""
            INSERT INTO projection_revenue_transaction_info (transaction_id, country, price_minor, currency)
            VALUES (\(transaction), \(country), \(applePrice?.minorUnits), \(applePrice?.currency))
            ON CONFLICT (transaction_id) DO NOTHING
            """)]
        if let country {
            statements.append(.prepared("""
                UPDATE projection_revenue_lines SET country = \(country)
                WHERE line_id IN \(fragment: lines) AND country = \(Storefront.unknown)
                """))
        }
        if let applePrice {
            let whole = RefundFraction.whole
            let share: SQL = "((\(applePrice.minorUnits)::bigint * fraction_milli + \(whole / 2)::bigint) / \(whole)::bigint)"
            statements.append(.prepared("""
                UPDATE projection_revenue_lines SET
                    currency = \(applePrice.currency),
                    gross_minor = CASE line_type WHEN 'sale' THEN \(applePrice.minorUnits)::bigint
                                                 WHEN 'refund' THEN -\(fragment: share) ELSE \(fragment: share) END,
                    sale_gross_minor = CASE WHEN line_type = 'sale' THEN NULL ELSE \(applePrice.minorUnits)::bigint END,
                    apple_price = true
                WHERE line_id IN \(fragment: lines) AND NOT apple_price
                """))
        }
        if country != nil || applePrice != nil {
            // A new country or price may meet a price point the line did not before.
            statements.append(priceLines(where: "l2.line_id IN ('sale:' || \(transaction), 'refund:' || \(transaction), 'reversal:' || \(transaction))"))
        }
        return statements
    }

    /// A product's price points as read at `refreshedAtMs`, and the lines they now price: those
    /// purchased from then on (whose table in force may now be this one), and, when this is the
    /// product's earliest refresh, those purchased before it (which the first refresh prices).
    /// Lines already priced by a later table keep it, so the result is the same in any order of
    /// refreshes, and a sale made before a tax change keeps the table of its day.
    ///
    /// Per app: the same product id in two apps is two products, each priced by its own points.
    static func pricePoints(app: String, _ product: String, refreshedAtMs: Int64, points: [PricePointsRefreshed.Point]) -> [SQL] {
        var statements: [SQL] = [.prepared("""
            INSERT INTO projection_revenue_app_price_refreshes (bundle_id, product_id, refreshed_at_ms) VALUES (\(app), \(product), \(refreshedAtMs))
            ON CONFLICT DO NOTHING
            """)]
        if !points.isEmpty {
            // One refresh read twice at the same millisecond keeps what the log recorded first.
            statements.append(.prepared("""
                INSERT INTO projection_revenue_app_price_points
                    (bundle_id, product_id, refreshed_at_ms, territory, currency, customer_price_minor, proceeds_minor, proceeds_year2_minor)
                SELECT \(app), \(product), \(refreshedAtMs), t, c, p, pr, y2
                FROM unnest(\(PostgresArray(points.map { Optional($0.territory) }))::text[],
                            \(PostgresArray(points.map { Optional($0.currency) }))::text[],
                            \(PostgresArray(points.map(\.customerPriceMinor)))::bigint[],
                            \(PostgresArray(points.map(\.proceedsMinor)))::bigint[],
                            \(PostgresArray(points.map(\.proceedsYear2Minor)))::bigint[]) AS u(t, c, p, pr, y2)
                WHERE p IS NOT NULL AND pr IS NOT NULL
                ON CONFLICT DO NOTHING
                """))
        }
        statements.append(priceLines(
            where: "l2.product_id = \(product) AND coalesce(l2.bundle_id, '') = \(app) AND l2.purchase_date_ms >= \(refreshedAtMs)"))
        // Only when this refresh is the product's earliest: a one-time filter, no scan otherwise.
        statements.append(priceLines(where: """
            l2.product_id = \(product) AND coalesce(l2.bundle_id, '') = \(app)
            AND \(refreshedAtMs)::bigint = (
                SELECT min(refreshed_at_ms) FROM projection_revenue_app_price_refreshes WHERE bundle_id = \(app) AND product_id = \(product))
            AND (l2.point_refreshed_at_ms IS NULL OR l2.point_refreshed_at_ms > \(refreshedAtMs))
            """))
        return statements
    }

    /// Sets, on the lines `condition` selects (alias `l2`), the refresh in force at their
    /// purchase (the latest at or before it, else the first) and the proceeds per unit of that
    /// refresh's point for their country, currency and customer price per unit (a refund's, its
    /// sale's price); NULL proceeds where no point matches, so the plan estimates them. Writes
    /// only the lines whose pricing changed.
    static func priceLines(where condition: SQL) -> SQL {
        .prepared("""
        UPDATE projection_revenue_lines l
        SET point_refreshed_at_ms = m.refreshed, point_proceeds_minor = m.proceeds, point_proceeds_year2_minor = m.year2
        FROM (SELECT l2.line_id, r.refreshed, pp.proceeds_minor AS proceeds, pp.proceeds_year2_minor AS year2
              FROM projection_revenue_lines l2
              \(fragment: pricePointJoins("l2", saleGross: "coalesce(l2.sale_gross_minor, abs(l2.gross_minor))"))
              WHERE \(fragment: condition)) m
        WHERE l.line_id = m.line_id
          AND (l.point_refreshed_at_ms, l.point_proceeds_minor, l.point_proceeds_year2_minor) IS DISTINCT FROM (m.refreshed, m.proceeds, m.year2)
        """)
    }

    /// Joins adding, to the revenue line aliased `line`, `r.refreshed` (the refresh in force at
    /// its purchase: the latest at or before it, else the product's first) and `pp`, that
    /// refresh's point for its country, currency and customer price per unit (`saleGross` is the
    /// whole sale's price; NULL columns where no point matches).
    static func pricePointJoins(_ line: String, saleGross: SQL) -> SQL {
        """
        CROSS JOIN LATERAL (
            SELECT coalesce(max(f.refreshed_at_ms) FILTER (WHERE f.refreshed_at_ms <= \(identifier: line).purchase_date_ms),
                            min(f.refreshed_at_ms)) AS refreshed
            FROM projection_revenue_app_price_refreshes f
            WHERE f.bundle_id = coalesce(\(identifier: line).bundle_id, '') AND f.product_id = \(identifier: line).product_id) r
        LEFT JOIN projection_revenue_app_price_points pp
          ON pp.bundle_id = coalesce(\(identifier: line).bundle_id, '') AND pp.product_id = \(identifier: line).product_id
         AND pp.refreshed_at_ms = r.refreshed AND pp.territory = \(identifier: line).country
         AND pp.currency = \(identifier: line).currency AND pp.customer_price_minor * \(identifier: line).quantity = \(fragment: saleGross)
        """
    }

    /// The refund of a sale: its negative, dated the day of the refund, with the sale's rate so
    /// the two net to zero; of a share (`fractionMilli` thousandths of a percent, a prorated
    /// refund's), round-half-up(sale × share / 100000), as `RefundFraction.money` computes it, the
    /// line keeping the share and the sale's gross for its commission and proceeds. The refunded
    /// sale stops counting toward the paid service of sales made after `atMs`, so those lines are
    /// rated again.
    static func revenueRefund(_ transaction: String, atMs: Int64, fractionMilli: Int64 = RefundFraction.whole) -> [SQL] {
        // The sale line keeps the refund's instant too, so rating reads it without a look-up
        // per earlier sale.
        let insert: SQL = .prepared("""
        WITH sale AS (
            UPDATE projection_revenue_lines SET refunded_at_ms = \(atMs)
            WHERE line_id = 'sale:' || \(transaction) AND refunded_at_ms IS NULL
            RETURNING *)
        INSERT INTO projection_revenue_lines
            (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
             purchase_date_ms, service_ms, currency, gross_minor, reduced_rate, refunded_at_ms, quantity, fraction_milli, sale_gross_minor,
             country, apple_price, point_refreshed_at_ms, point_proceeds_minor, point_proceeds_year2_minor, offer_id, bundle_id)
        SELECT 'refund:' || transaction_id, 'refund', transaction_id, original_transaction_id, product_id, kind, user_id,
               environment, \(RevenueDay.of(atMs))::date, purchase_date_ms, NULL, currency,
               -\(fragment: share(of: "gross_minor", fractionMilli)), reduced_rate, \(atMs), quantity, \(fractionMilli), gross_minor,
               country, apple_price, point_refreshed_at_ms, point_proceeds_minor, point_proceeds_year2_minor, offer_id, bundle_id
        FROM sale
        ON CONFLICT (line_id) DO NOTHING
        """)
        let original: SQL = "(SELECT original_transaction_id FROM projection_revenue_lines WHERE line_id = 'sale:' || \(transaction))"
        return [insert, rerate(original: original, after: "\(atMs)::bigint")]
    }

    /// A reversed refund: what the refund took (`fractionMilli` of the sale, as it recorded)
    /// counts again, as a line dated the day of the reversal (the refund's period keeps the
    /// refund), and the sale toward the subscription's paid service again.
    static func revenueReversal(_ transaction: String, atMs: Int64, fractionMilli: Int64 = RefundFraction.whole) -> [SQL] {
        let insert: SQL = .prepared("""
        WITH sale AS (
            UPDATE projection_revenue_lines SET refunded_at_ms = NULL
            WHERE line_id = 'sale:' || \(transaction) AND refunded_at_ms IS NOT NULL
            RETURNING *)
        INSERT INTO projection_revenue_lines
            (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
             purchase_date_ms, service_ms, currency, gross_minor, reduced_rate, refunded_at_ms, quantity, fraction_milli, sale_gross_minor,
             country, apple_price, point_refreshed_at_ms, point_proceeds_minor, point_proceeds_year2_minor, offer_id, bundle_id)
        SELECT 'reversal:' || transaction_id, 'reversal', transaction_id, original_transaction_id, product_id, kind, user_id,
               environment, \(RevenueDay.of(atMs))::date, purchase_date_ms, NULL, currency,
               \(fragment: share(of: "gross_minor", fractionMilli)), reduced_rate, NULL, quantity, \(fractionMilli), gross_minor,
               country, apple_price, point_refreshed_at_ms, point_proceeds_minor, point_proceeds_year2_minor, offer_id, bundle_id
        FROM sale
        ON CONFLICT (line_id) DO NOTHING
        """)
        let original: SQL = "(SELECT original_transaction_id FROM projection_revenue_lines WHERE line_id = 'sale:' || \(transaction))"
        return [insert, rerate(original: original, after: "0::bigint")]
    }

    /// `fractionMilli` of the non-negative amount `minor` (a column), rounded half up, in
    /// integers: `RefundFraction.money`. All of it is the column itself, so a full refund's line
    /// is exactly its sale's negative, as before shares were.
    static func share(of minor: SQL, _ fractionMilli: Int64) -> SQL {
        guard fractionMilli != RefundFraction.whole else { return minor }
        return "((\(fragment: minor) * \(fractionMilli)::bigint + \(RefundFraction.whole / 2)::bigint) / \(RefundFraction.whole)::bigint)"
    }

    /// Rates again, for each of `originals`, the subscription's lines purchased after its
    /// `after`, writing only those whose rate changed (one statement for a run of sales).
    private static func rerate(originals: [String?], after: [Int64?]) -> SQL {
        let service = paidService(of: "o.original_transaction_id", before: "o.purchase_date_ms")
        return .prepared("""
        UPDATE projection_revenue_lines l SET reduced_rate = n.rate
        FROM unnest(\(PostgresArray(originals))::text[], \(PostgresArray(after))::bigint[]) AS a(original, after)
        -- Per subscription, its lines by their index: `OFFSET 0` keeps the planner from turning
        -- this into a join over the whole table (a generic plan did: 5 ms a statement).
        CROSS JOIN LATERAL (
            SELECT o.line_id, \(fragment: service) >= \(CommissionPlan.yearOfServiceMs) AS rate
            FROM projection_revenue_lines o
            WHERE o.original_transaction_id = a.original AND o.kind = 'auto_renewable' AND o.purchase_date_ms > a.after
            OFFSET 0) n
        WHERE l.line_id = n.line_id AND l.reduced_rate <> n.rate
        """)
    }

    /// Rates again the subscription's lines purchased after `after`, writing only those whose
    /// rate changed. A separate statement, so it sees the line its caller just inserted.
    private static func rerate(original: SQL, after: SQL) -> SQL {
        let service = paidService(of: "o.original_transaction_id", before: "o.purchase_date_ms")
        return .prepared("""
        UPDATE projection_revenue_lines l SET reduced_rate = n.rate
        FROM (SELECT o.line_id, \(fragment: service) >= \(CommissionPlan.yearOfServiceMs) AS rate
              FROM projection_revenue_lines o
              WHERE o.original_transaction_id = \(fragment: original) AND o.kind = 'auto_renewable'
                AND o.purchase_date_ms > \(fragment: after)) n
        WHERE l.line_id = n.line_id AND l.reduced_rate <> n.rate
        """)
    }

    /// The paid service (milliseconds) subscription `original` had before the instant `before`
    /// (SQL expressions), as Apple counts it toward the 15% rate: the periods of its sales
    /// purchased before that instant, leaving out sales refunded before it ("paid days stopped
    /// when the refund occurred"), counted from the last return after a lapse of more than 60
    /// days; zero when `before` itself comes more than 60 days after the last paid day.
    static func paidService(of original: SQL, before instant: SQL) -> SQL {
        let lapse = CommissionPlan.lapseResetMs
        return """
        (SELECT CASE WHEN max(x.finish) IS NULL OR \(fragment: instant) - max(x.finish) > \(lapse) THEN 0
                     ELSE coalesce(sum(x.service_ms) FILTER (WHERE x.start >= x.streak), 0) END
         FROM (SELECT m.start, m.finish, m.service_ms,
                      coalesce(max(m.start) FILTER (WHERE m.breaks) OVER (), min(m.start) OVER ()) AS streak
               FROM (SELECT e.purchase_date_ms AS start, e.purchase_date_ms + e.service_ms AS finish, e.service_ms,
                            e.purchase_date_ms - max(e.purchase_date_ms + e.service_ms) OVER (
                                ORDER BY e.purchase_date_ms, e.transaction_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
                            ) > \(lapse) AS breaks
                     FROM projection_revenue_lines e
                     WHERE e.original_transaction_id = \(fragment: original) AND e.purchase_date_ms < \(fragment: instant)
                       AND e.line_type = 'sale' AND e.service_ms IS NOT NULL
                       AND (e.refunded_at_ms IS NULL OR e.refunded_at_ms >= \(fragment: instant))
                    ) m
              ) x)
        """
    }
}
