import Foundation
@testable import Ledger
@testable import LedgerProjections
@testable import LedgerQueries
import Postgres
import Testing

/// Get Transaction Info's answer in the revenue lines themselves, in either order of the log.
@Suite("Apple's Get Transaction Info in the revenue lines")
struct RevenueTransactionInfoTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// A sale of a gem pack; priced by the catalog unless `applePrice` is given.
    static func sale(_ transaction: String, applePrice: Money? = nil, country: String? = nil) -> RevenueSale {
        RevenueSale(
            transactionId: transaction, originalTransactionId: transaction, productId: "com.example.gems", kind: .consumable,
            userId: "u1", environment: "Production", purchaseDateMs: start, serviceMs: nil, quantity: 1, applePrice: applePrice,
            country: country)
    }

    static func run(_ statements: [SQL], on connection: Connection) throws {
        for statement in statements { try connection.execute(statement) }
    }

    @Test("the answer prices a catalog-priced sale and its 25% refund and places them; a sale recorded after the answer takes it; Apple's signed sale keeps its own")
    func linesTakeTheAnswer() async throws {
        let (lines, rows) = try await LedgerHarness.withMigratedSchema { pool in
            try await pool.withConnection { connection in
                try connection.execute(ProjectionSQL.catalogPrice("", "com.example.gems", 100, "USD", effectiveMs: 0))
                // A: a receipt's sale, refunded 25%, then Apple's answer: 4.99 EUR in Germany.
                try Self.run(ProjectionSQL.revenueSales([Self.sale("A")]), on: connection)
                try Self.run(ProjectionSQL.revenueRefund("A", atMs: Self.start + Self.day, fractionMilli: 25_000), on: connection)
                try Self.run(ProjectionSQL.transactionInfo("A", country: "DEU", applePrice: Money(minorUnits: 499, currency: "EUR")), on: connection)
                // B: the answer first, the sale after it.
                try Self.run(ProjectionSQL.transactionInfo("B", country: "GBR", applePrice: Money(minorUnits: 399, currency: "GBP")), on: connection)
                try Self.run(ProjectionSQL.revenueSales([Self.sale("B")]), on: connection)
                // C: signed in the USA at Apple's price; an answer saying otherwise changes nothing.
                try Self.run(ProjectionSQL.revenueSales([Self.sale("C", applePrice: Money(minorUnits: 299, currency: "USD"), country: "USA")]), on: connection)
                try Self.run(ProjectionSQL.transactionInfo("C", country: "DEU", applePrice: Money(minorUnits: 1, currency: "EUR")), on: connection)
                // D: an answer with a country and no price keeps the catalog's price.
                try Self.run(ProjectionSQL.revenueSales([Self.sale("D")]), on: connection)
                try Self.run(ProjectionSQL.transactionInfo("D", country: "JPN", applePrice: nil), on: connection)
                // E: no answer at all.
                try Self.run(ProjectionSQL.revenueSales([Self.sale("E")]), on: connection)
                var lines: [String] = []
                for row in try connection.query("""
                    SELECT line_id, country, currency, gross_minor, coalesce(sale_gross_minor, 0), apple_price FROM projection_revenue_lines ORDER BY line_id
                    """) {
                    lines.append([
                        try row.decode(0, as: String.self), try row.decode(1, as: String.self), try row.decode(2, as: String.self),
                        String(try row.decode(3, as: Int64.self)), String(try row.decode(4, as: Int64.self)), String(try row.decode(5, as: Bool.self)),
                    ].joined(separator: " "))
                }
                let rows = try ReadModels.revenueRows(try RevenueQuery(from: "2026-01-01", to: "2026-12-31", groupBy: .country), legacyApp: "", on: connection)
                return (lines, rows)
            }
        }
        #expect(lines == [
            "refund:A DEU EUR -125 499 true",  // round-half-up(4.99 × 25%) = 1.25
            "sale:A DEU EUR 499 0 true",
            "sale:B GBR GBP 399 0 true",
            "sale:C USA USD 299 0 true",
            "sale:D JPN USD 100 0 false",
            "sale:E unknown USD 100 0 false",
        ])
        #expect(Set(rows.map { "\($0.key) \($0.currency)" }) == ["DEU EUR", "GBR GBP", "JPN USD", "USA USD", "unknown USD"])
        let germany = try #require(rows.first { $0.key == "DEU" })
        #expect(germany.grossMinor == 499 && germany.refundedMinor == 125 && germany.netMinor == 374)
        #expect(rows.allSatisfy { $0.proceedsEstimated && $0.taxMinor == 0 })
    }
}
