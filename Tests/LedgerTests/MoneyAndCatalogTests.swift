import Foundation
import Testing

@testable import Ledger

@Suite("Money and the catalog file")
struct MoneyAndCatalogTests {
    /// (Apple's milliunits, currency, minor units).
    static let milliunits: [(Int64, String, Int64)] = [
        (10990, "USD", 1099), (1995, "USD", 200), (1994, "USD", 199), (-1995, "USD", -200),
        (990, "EUR", 99), (120_000, "JPY", 120), (120_500, "JPY", 121), (120_499, "JPY", 120),
    ]

    @Test("Apple's milliunits become minor units, rounding half away from zero", arguments: MoneyAndCatalogTests.milliunits)
    func fromMilliunits(milliunits: Int64, currency: String, minorUnits: Int64) {
        #expect(Money.fromMilliunits(milliunits, currency: currency) == Money(minorUnits: minorUnits, currency: currency))
    }

    @Test("zero-decimal currencies have no minor digits")
    func minorDigits() {
        #expect(Money.minorDigits(of: "JPY") == 0)
        #expect(Money.minorDigits(of: "krw") == 0)
        #expect(Money.minorDigits(of: "USD") == 2)
    }

    /// (catalog file, a fragment the error must contain).
    static let invalidCatalogs: [(String, String)] = [
        (#"""
        {"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}},
                      {"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 200}}]}
        """#, "product com.example.coins100 is listed twice"),
        (#"{"products": [{"product_id": "com.example.removeads", "kind": "non_consumable", "grants": {}, "price_minor": -1, "currency": "USD"}]}"#,
         "product com.example.removeads has a negative price_minor"),
        (#"{"products": [{"product_id": "com.example.pro.monthly", "kind": "subscription", "grants": {}}]}"#,
         "products.[0].kind"),
        (#"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99}]}"#,
         "product com.example.coins100 has a price_minor but no currency"),
        (#"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "US"}]}"#,
         "not an ISO 4217 code"),
        (#"{"products": [{"product_id": "", "kind": "consumable", "grants": {}}]}"#, "empty product_id"),
        (#"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 0}}]}"#,
         "grants are positive amounts"),
        (#"{"products": [{"kind": "consumable", "grants": {}}]}"#, "missing field products.[0].product_id"),
        (#"[{"product_id": "com.example.coins100"}]"#, "the catalog is not"),
    ]

    @Test("a catalog file that cannot be used is refused, naming the product and field", arguments: MoneyAndCatalogTests.invalidCatalogs)
    func invalidCatalog(file: String, fragment: String) {
        do {
            let products = try Catalog.parse(Data(file.utf8))
            Issue.record("parsed \(products.count) products; expected an error mentioning \(fragment)")
        } catch {
            // `parse` throws only CatalogError (typed throws).
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test("docs/configuration.md's example catalog parses; grants and price are optional")
    func contractExample() throws {
        let file = """
            {"products": [
              {"product_id": "com.example.coins100", "kind": "consumable",
               "grants": {"coins": 100}, "price_minor": 99, "currency": "USD"},
              {"product_id": "com.example.pro.monthly", "kind": "auto_renewable", "price_minor": 499, "currency": "USD"}
            ]}
            """
        let products = try Catalog.parse(Data(file.utf8))
        #expect(products == [
            Product(productId: "com.example.coins100", kind: .consumable, grants: ["coins": 100], priceMinor: 99, currency: "USD"),
            Product(productId: "com.example.pro.monthly", kind: .autoRenewable, priceMinor: 499, currency: "USD"),
        ])
    }

    @Test("grant units are kept as written, underscores included")
    func grantUnitsAsWritten() throws {
        let file = #"{"products": [{"product_id": "com.example.chest", "kind": "consumable", "grants": {"gold_coins": 5, "extraLives": 1}}]}"#
        let products = try Catalog.parse(Data(file.utf8))
        #expect(products.first?.grants == ["gold_coins": 5, "extraLives": 1])
    }

    @Test("loading a newer catalog replaces the products it names and keeps the others")
    func merge() {
        var catalog = Given.catalog
        catalog.merge(CatalogLoaded(products: [
            Product(productId: Given.coins, kind: .consumable, grants: ["coins": 120], priceMinor: 99, currency: "USD"),
            Product(productId: "com.example.gems500", kind: .consumable, grants: ["gems": 500]),
        ]))
        #expect(catalog[Given.coins]?.grants == ["coins": 120])
        #expect(catalog["com.example.gems500"]?.kind == .consumable)
        #expect(catalog[Given.removeAds] == Given.catalog[Given.removeAds])
        #expect(catalog.products.count == 5)
    }
}
