import Ledger
import LedgerStore
import Postgres

/// A sale in a revenue query's period whose proceeds no price point states, and why: so an
/// estimate is named, never silently taken for Apple's figure.
public struct EstimatedSale: Sendable, Hashable, Encodable {
    public var transactionId: String
    public var productId: String
    public var day: String
    public var country: String
    public var currency: String
    public var grossMinor: Int64
    /// "no price points read for the product", or "no price point for 0.99 EUR in DEU" (an
    /// offer's price, a price Apple changed, a storefront the table lacks).
    public var reason: String
}

extension ReadModels {
    /// Up to `limit` of `query`'s sales that the commission plan estimated, oldest first, and
    /// how many there are in all.
    public func estimatedSales(_ query: RevenueQuery, limit: Int = 20) async throws -> (sales: [EstimatedSale], count: Int64) {
        try await mappingDatabaseErrors {
            try await withConsistentConnection { connection in
                // One query: the window's count is taken before the LIMIT, so it is all of them.
                let rows = try connection.query("""
                    SELECT transaction_id, product_id, to_char(day, 'YYYY-MM-DD'), country, currency, gross_minor / greatest(quantity, 1),
                           point_refreshed_at_ms IS NULL, gross_minor, count(*) OVER ()
                    FROM projection_revenue_lines
                    WHERE environment = \(query.environment) AND day BETWEEN \(query.from)::date AND \(query.to)::date
                      AND line_type = 'sale' AND point_proceeds_minor IS NULL
                    ORDER BY purchase_date_ms, transaction_id LIMIT \(Int64(limit))
                    """)
                let count: Int64 = try rows.first?.decode(8) ?? 0
                let sales = try rows.map { row in
                    let currency: String = try row.decode(4)
                    let country: String = try row.decode(3)
                    let unit = Money(minorUnits: try row.decode(5), currency: currency)
                    return EstimatedSale(
                        transactionId: try row.decode(0), productId: try row.decode(1), day: try row.decode(2), country: country,
                        currency: currency, grossMinor: try row.decode(7),
                        reason: try row.decode(6) ? "no price points read for the product"
                            : country == Storefront.unknown ? "its storefront is not known"
                            : "no price point for \(unit.decimal) \(currency) in \(country)")
                }
                return (sales, count)
            }
        }
    }
}
