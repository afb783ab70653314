@testable import Ledger
@testable import LedgerProjections
@testable import LedgerService
import Postgres
import Testing

/// docs/configuration.md: "Loading a catalog appends events, so a replay prices each purchase as the
/// catalog stood when it was made", not as it stands when the sale happens to be recorded.
@Suite("A sale without Apple's price takes the catalog price of its purchase time")
struct RevenueCatalogPriceTests {
    static func sale(_ id: String, purchasedAt: Int64, quantity: Int64 = 1) -> RevenueSale {
        RevenueSale(
            transactionId: id, originalTransactionId: id, productId: "com.example.gems", kind: .consumable, userId: "u1",
            environment: "Production", purchaseDateMs: purchasedAt, serviceMs: nil, quantity: quantity, applePrice: nil)
    }

    @Test("before the first load the first price, between loads the earlier one, after the last the last, times the quantity")
    func priceAtPurchase() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let gross = try await pool.withConnection { connection in
                try connection.execute(ProjectionSQL.catalogPrice("", "com.example.gems", 100, "USD", effectiveMs: 1_000_000))
                try connection.execute(ProjectionSQL.catalogPrice("", "com.example.gems", 150, "USD", effectiveMs: 5_000_000))
                // Recorded after both loads, as a late receipt or an import would be.
                for (id, at) in [("before", Int64(10)), ("between", 3_000_000), ("at-second", 5_000_000), ("after", 9_000_000)] {
                    for statement in ProjectionSQL.revenueSales([Self.sale(id, purchasedAt: at)]) { try connection.execute(statement) }
                }
                for statement in ProjectionSQL.revenueSales([Self.sale("three", purchasedAt: 3_000_000, quantity: 3)]) { try connection.execute(statement) }
                var gross: [String: Int64] = [:]
                for row in try connection.query("SELECT transaction_id, gross_minor FROM projection_revenue_lines WHERE product_id = 'com.example.gems'") {
                    gross[try row.decode(0, as: String.self)] = try row.decode(1, as: Int64.self)
                }
                return gross
            }
            #expect(gross == ["before": 100, "between": 100, "at-second": 150, "after": 150, "three": 300])
        }
    }
}
