import Ledger
import LedgerStore
import Postgres

/// What `audit revenue` and `GET /v1/reports/revenue` report on.
public struct RevenueQuery: Sendable, Hashable {
    public enum Grouping: String, Sendable, CaseIterable {
        /// By UTC day (`YYYY-MM-DD`), month (`YYYY-MM`), product id, or country: the storefront's
        /// ISO 3166-1 alpha-3 code, `unknown` where Apple never said (`Storefront.unknown`); by
        /// the offer that priced each sale (Apple's `offerIdentifier`), `none` without one; or by
        /// app (bundle id).
        case day, month, product, country, offer, app

        /// The groupings as a sentence for error messages: "day, month, product, country, offer or app".
        public static var listed: String {
            let names = allCases.map(\.rawValue)
            return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
        }
    }

    /// First and last day (UTC, inclusive), `YYYY-MM-DD`.
    public var from: String
    public var to: String
    public var groupBy: Grouping
    /// `Production` unless asked: sandbox money is never revenue, only reported apart.
    public var environment: String
    public var commission: CommissionPlan
    /// One app's lines only; nil: every app's.
    public var bundleId: String?

    /// Checks the dates; the message names what is wrong.
    public init(
        from: String, to: String, groupBy: Grouping = .day, environment: String = "Production", commission: CommissionPlan = .standard,
        bundleId: String? = nil
    ) throws(LedgerServiceError) {
        for (name, value) in [("from", from), ("to", to)] where !Self.isDate(value) {
            throw LedgerServiceError(.invalidRequest, "\(name) must be a date YYYY-MM-DD, not \(value)")
        }
        guard from <= to else { throw LedgerServiceError(.invalidRequest, "from (\(from)) is after to (\(to))") }
        guard ["Production", "Sandbox"].contains(environment) else {
            throw LedgerServiceError(.invalidRequest, "environment is Production or Sandbox, not \(environment)")
        }
        self.from = from
        self.to = to
        self.groupBy = groupBy
        self.environment = environment
        self.commission = commission
        self.bundleId = bundleId
    }

    /// A real calendar day written `YYYY-MM-DD`.
    static func isDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month),
              year >= 1  // PostgreSQL has no year 0: 0000-01-01 would fail in SQL, not as bad input
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return (1...lengths[month - 1]).contains(day)
    }
}

/// One group's money in one currency (or, as a total, one currency's), in minor units:
/// `net = tax + commission + proceeds`. Proceeds are those of Apple's price points where one
/// prices a sale, else the commission plan's estimate (`LEDGER_COMMISSION`), which the row then
/// says (`proceedsEstimated`).
public struct RevenueRow: Sendable, Hashable, Encodable {
    /// `YYYY-MM-DD`, `YYYY-MM`, a product id, a country (ISO 3166-1 alpha-3, or `unknown`), an
    /// offer or a bundle id; empty in totals.
    public var key: String
    public var currency: String
    public var purchases: Int64
    public var refunds: Int64
    public var grossMinor: Int64
    public var refundedMinor: Int64
    public var netMinor: Int64
    public var commissionMinor: Int64
    public var proceedsMinor: Int64
    /// The tax Apple keeps before its commission (VAT, GST), as the price points imply it; 0 for
    /// the sales they do not price.
    public var taxMinor: Int64 = 0
    /// True when a sale in the row had no price point, so the commission plan estimated its
    /// proceeds.
    public var proceedsEstimated: Bool = false
    /// The app whose lines the row sums; empty in totals, which add every app's.
    public var bundleId: String = ""

    enum Keys: String, CodingKey {
        case key, currency, purchases, refunds, bundleId = "bundle_id"
        case grossMinor = "gross_minor", refundedMinor = "refunded_minor", netMinor = "net_minor", taxMinor = "tax_minor"
        case commissionMinor = "commission_minor", proceedsMinor = "proceeds_minor", proceedsEstimated = "proceeds_estimated"
    }

    /// docs/http-api.md's row; a total (empty key) has no `key`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        if !key.isEmpty { try c.encode(key, forKey: .key) }
        try c.encode(currency, forKey: .currency)
        try c.encode(purchases, forKey: .purchases)
        try c.encode(refunds, forKey: .refunds)
        try c.encode(grossMinor, forKey: .grossMinor)
        try c.encode(refundedMinor, forKey: .refundedMinor)
        try c.encode(netMinor, forKey: .netMinor)
        try c.encode(taxMinor, forKey: .taxMinor)
        try c.encode(commissionMinor, forKey: .commissionMinor)
        try c.encode(proceedsMinor, forKey: .proceedsMinor)
        try c.encode(proceedsEstimated, forKey: .proceedsEstimated)
        if !bundleId.isEmpty { try c.encode(bundleId, forKey: .bundleId) }
    }

    /// The sum of two rows of one currency.
    func adding(_ other: RevenueRow) -> RevenueRow {
        precondition(currency == other.currency, "amounts of two currencies are never added")
        return RevenueRow(
            key: key, currency: currency, purchases: purchases + other.purchases, refunds: refunds + other.refunds,
            grossMinor: grossMinor + other.grossMinor, refundedMinor: refundedMinor + other.refundedMinor,
            netMinor: netMinor + other.netMinor, commissionMinor: commissionMinor + other.commissionMinor,
            proceedsMinor: proceedsMinor + other.proceedsMinor, taxMinor: taxMinor + other.taxMinor,
            proceedsEstimated: proceedsEstimated || other.proceedsEstimated)
    }
}

/// Rows by group and currency, and one total per currency (never across currencies). Encodes
/// as docs/http-api.md's `{"rows", "totals"}`.
public struct RevenueReport: Sendable, Hashable, Encodable {
    public var query: RevenueQuery
    public var rows: [RevenueRow]
    public var totals: [RevenueRow]

    enum Keys: String, CodingKey { case rows, totals }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(rows, forKey: .rows)
        try c.encode(totals, forKey: .totals)
    }

    /// The rows with every app's added, by key and currency (a chart over time draws one
    /// point per day, not one per app).
    public var rowsAcrossApps: [RevenueRow] {
        var merged: [String: RevenueRow] = [:]
        var order: [String] = []
        for row in rows {
            var blank = row
            blank.bundleId = ""
            let key = row.key + "\u{0}" + row.currency
            if let known = merged[key] { merged[key] = known.adding(blank) } else { merged[key] = blank; order.append(key) }
        }
        return order.compactMap { merged[$0] }
    }

    init(query: RevenueQuery, rows: [RevenueRow]) {
        self.query = query
        self.rows = rows
        var totals: [String: RevenueRow] = [:]
        for row in rows {
            var blank = row
            blank.key = ""
            blank.bundleId = ""
            totals[row.currency] = totals[row.currency]?.adding(blank) ?? blank
        }
        self.totals = totals.keys.sorted().compactMap { totals[$0] }
    }
}

extension ReadModels {
    /// The revenue report, once the projections have applied the log as it stood at the call.
    public func revenue(_ query: RevenueQuery) async throws -> RevenueReport {
        try await mappingDatabaseErrors {
            return try await withConsistentConnection { [legacy] connection in
                RevenueReport(query: query, rows: try Self.revenueRows(query, legacyApp: try legacy.name(on: connection), on: connection))
            }
        }
    }

    /// Rows by the grouping's key, app and currency: every row is one app's (lines written before
    /// they named their app are `legacyApp`'s).
    static func revenueRows(_ query: RevenueQuery, legacyApp: String, on connection: Connection) throws -> [RevenueRow] {
        let app: SQL = "coalesce(bundle_id, \(legacyApp))"
        let key: SQL = switch query.groupBy {
        case .day: "to_char(day, 'YYYY-MM-DD')"
        case .month: "to_char(day, 'YYYY-MM')"
        case .product: "product_id"
        case .country: "country"
        case .offer: "coalesce(offer_id, 'none')"
        case .app: app
        }
        // Per line (`RevenueLineMoney`, `SaleMoney`'s rule): a sale priced by Apple's price point
        // pays that point's proceeds and the tax it implies; one without pays the plan's
        // estimate. A line moving a share of its sale (a prorated refund and its reversal) moves
        // that share of the sale's tax and proceeds, rounded half up; commission is the rest, so
        // net = tax + commission + proceeds in every row.
        let tax = RevenueLineMoney.tax(query.commission)
        let proceeds = RevenueLineMoney.proceeds(query.commission)
        return try connection.query("""
            SELECT \(fragment: key) AS key, currency,
                   count(*) FILTER (WHERE line_type = 'sale'),
                   (count(*) FILTER (WHERE line_type = 'refund') - count(*) FILTER (WHERE line_type = 'reversal')),
                   coalesce(sum(gross_minor) FILTER (WHERE line_type = 'sale'), 0)::bigint,
                   coalesce(-sum(gross_minor) FILTER (WHERE line_type IN ('refund', 'reversal')), 0)::bigint,
                   sum(gross_minor)::bigint,
                   sum(\(fragment: tax))::bigint,
                   sum(\(fragment: proceeds))::bigint,
                   bool_or(\(fragment: RevenueLineMoney.estimated)),
                   \(fragment: app) AS app
            FROM projection_revenue_lines
            WHERE environment = \(query.environment) AND day BETWEEN \(query.from)::date AND \(query.to)::date
              AND (\(query.bundleId)::text IS NULL OR \(fragment: app) = \(query.bundleId))
            GROUP BY 1, 11, 2 ORDER BY 1, 11, 2
            """).map { row in
            let net: Int64 = try row.decode(6)
            let tax: Int64 = try row.decode(7)
            let proceeds: Int64 = try row.decode(8)
            return RevenueRow(
                key: try row.decode(0), currency: try row.decode(1), purchases: try row.decode(2), refunds: try row.decode(3),
                grossMinor: try row.decode(4), refundedMinor: try row.decode(5), netMinor: net, commissionMinor: net - tax - proceeds,
                proceedsMinor: proceeds, taxMinor: tax, proceedsEstimated: try row.decode(9), bundleId: try row.decode(10))
        }
    }
}
