import AppStore
import AppleSimulator
import Foundation
import Testing

/// The reports name each sale's country by its storefront and pay the proceeds of the
/// simulator's own price points: net of the territory's tax at the purchase date, less 30 %
/// (15 % in a subscriber's second year). A prorated refund returns its share of both.
///
/// Figures by hand, with the price points' rule (net = price / (1 + tax); commission rounded
/// down to the minor unit; proceeds = net − commission, half up).
@Suite("Reports by storefront, with the price points' proceeds")
struct StorefrontReportTests {
    /// The sales summary's rows of a Pacific day.
    static func sales(_ simulator: AppleSimulator, day: String) throws -> [[String: String]] {
        try AppStoreConnectReportTests.rows(try simulator.salesSummaryReport(day: day), headerStartingWith: "Provider").rows
    }

    @Test("a DEU purchase of a 0.99 USD product is a DE row in EUR paying the DEU price point's proceeds")
    func germany() async throws {
        let key = ConnectAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            try await simulator.purchase(
                appleId: "de", productId: "com.example.coins100", environment: .production, storefront: "DEU")

            // DEU 0.99 EUR at 19 %: net 0.99 / 1.19 = 0.8319…, commission 0.2495… rounded down
            // to 0.24, proceeds 0.5919… = 0.59.
            let row = try #require(try Self.sales(simulator, day: "2024-12-31").first)
            #expect(row["Country Code"] == "DE")
            #expect(row["Customer Currency"] == "EUR" && row["Currency of Proceeds"] == "EUR")
            #expect(row["Customer Price"] == "0.99" && row["Units"] == "1")
            #expect(row["Developer Proceeds"] == "0.59")

            // The same figure as the price point App Store Connect serves for DEU 0.99.
            let id = try ConnectPricePointTests.appleId("com.example.coins100")
            let url = "\(running.serverAPIURL)/v2/inAppPurchases/\(id)/pricePoints?filter%5Bterritory%5D=DEU&limit=200"
            let points = try await ConnectPricePointTests.allPages(url, token: try await key.token()).points
            let served = try #require(ConnectPricePointTests.proceeds(points, territory: "DEU", price: "0.99"))
            #expect(Decimal(string: served) == Decimal(string: row["Developer Proceeds"] ?? ""), "served \(served)")

            let text = try simulator.financialReport(from: "2024-12-31", to: "2024-12-31")
            let detail = try #require(try AppStoreConnectReportTests.rows(text, headerStartingWith: "Transaction Date").rows.first)
            #expect(detail["Country of Sale"] == "DE" && detail["Region"] == "Euro-Zone")
            #expect(detail["Partner Share"] == "0.59" && detail["Extended Partner Share"] == "0.59")
            #expect(detail["Partner Share Currency"] == "EUR" && detail["Customer Currency"] == "EUR")
            let summary = try AppStoreConnectReportTests.rows(text, headerStartingWith: "Country Of Sale").rows
            #expect(summary == [["Country Of Sale": "DE", "Partner Share Currency": "EUR", "Quantity": "1", "Extended Partner Share": "0.59"]])
        }
    }

    @Test("a JPN purchase is a JP row in yen: 160 JPY a unit paying 102")
    func japan() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        try await simulator.purchase(
            appleId: "jp", productId: "com.example.coins100", environment: .production, quantity: 2, storefront: "JPN")
        // JPN 160 JPY at 10 %: net 145.45…, commission 43.63… rounded down to 43, proceeds
        // 102.45… = 102 (yen has no minor unit).
        let rows = try Self.sales(simulator, day: "2024-12-31")
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row["Country Code"] == "JP" && row["Customer Currency"] == "JPY" && row["Currency of Proceeds"] == "JPY")
        #expect(row["Units"] == "2" && row["Customer Price"] == "160" && row["Developer Proceeds"] == "102")
    }

    @Test("a purchase before and one after a DEU tax change are two rows with the two rates' proceeds")
    func taxChange() async throws {
        var configuration = SimulatorHarness.configuration()
        let start = Date(timeIntervalSince1970: Double(SimulatorHarness.startMs) / 1000)
        // From an hour after the start (still Dec 31 in Los Angeles), Germany's VAT is 16 %.
        configuration.taxChanges = [TaxChange(territory: "DEU", from: start.addingTimeInterval(3600), ratePercent: 16)]
        let simulator = try AppleSimulator(configuration: configuration)
        try await simulator.purchase(appleId: "de", productId: "com.example.coins100", environment: .production, storefront: "DEU")
        try await simulator.advance(by: .seconds(7200))
        try await simulator.purchase(appleId: "de", productId: "com.example.coins100", environment: .production)

        // At 19 %: 0.59 (see `germany`). At 16 %: net 0.99 / 1.16 = 0.8534…, commission 0.2560…
        // rounded down to 0.25, proceeds 0.6034… = 0.60.
        let rows = try Self.sales(simulator, day: "2024-12-31")
        #expect(rows.count == 2, "\(rows)")
        #expect(rows.map { $0["Developer Proceeds"] ?? "" }.sorted() == ["0.59", "0.60"])
        #expect(rows.allSatisfy { $0["Customer Price"] == "0.99" && $0["Units"] == "1" && $0["Country Code"] == "DE" })

        let text = try simulator.financialReport(from: "2024-12-31", to: "2024-12-31")
        let detail = try AppStoreConnectReportTests.rows(text, headerStartingWith: "Transaction Date").rows
        #expect(detail.map { $0["Partner Share"] ?? "" }.sorted() == ["0.59", "0.60"])
        let summary = try AppStoreConnectReportTests.rows(text, headerStartingWith: "Country Of Sale").rows
        #expect(summary == [["Country Of Sale": "DE", "Partner Share Currency": "EUR", "Quantity": "2", "Extended Partner Share": "1.19"]])
    }

    @Test("a 25% prorated refund is a return of a quarter of the price and of the proceeds, rounded half up")
    func proratedRefund() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let bought = try await simulator.purchase(appleId: "us", productId: "com.example.removeads", environment: .production)
        try await simulator.advance(days: 1)
        let refunded = try await simulator.refund(transactionId: bought.transactionId, revocationPercentage: 25_000)
        #expect(refunded.revocationType == "REFUND_PRORATED" && refunded.revocationPercentage == 25_000)
        let signed = try SimulatedCommitmentTests.decode(
            SignedTransaction.self, jws: try simulator.signedTransaction(bought.transactionId))
        #expect(signed.revocationType == .refundProrated && signed.revocationPercentage == 25_000)

        // USA 2.99 USD, no tax: commission 0.897 rounded down to 0.89, proceeds 2.10.
        let sale = try #require(try Self.sales(simulator, day: "2024-12-31").first)
        #expect(sale["Customer Price"] == "2.99" && sale["Developer Proceeds"] == "2.10")
        // A quarter: price 299 × 25000 / 100000 = 74.75 → 0.75; proceeds 210 × 0.25 = 52.5 → 0.53.
        let returns = try Self.sales(simulator, day: "2025-01-01")
        #expect(returns.count == 1)
        let refund = try #require(returns.first)
        #expect(refund["Units"] == "-1" && refund["Customer Price"] == "-0.75" && refund["Developer Proceeds"] == "0.53")
        #expect(refund["Country Code"] == "US" && refund["Customer Currency"] == "USD")

        let text = try simulator.financialReport(from: "2024-12-31", to: "2025-01-01")
        let detail = try AppStoreConnectReportTests.rows(text, headerStartingWith: "Transaction Date").rows
        let returned = try #require(detail.first { $0["Sale or Return"] == "R" })
        #expect(returned["Partner Share"] == "0.53" && returned["Extended Partner Share"] == "-0.53")
        #expect(returned["Customer Price"] == "-0.75" && returned["Quantity"] == "-1")
        let summary = try AppStoreConnectReportTests.rows(text, headerStartingWith: "Country Of Sale").rows
        // 2.10 paid, 0.53 taken back: 1.57 over 1 − 1 units.
        #expect(summary == [["Country Of Sale": "US", "Partner Share Currency": "USD", "Quantity": "0", "Extended Partner Share": "1.57"]])
    }

    @Test("a yearly plan's renewal a year after its purchase pays the 15% commission")
    func secondYear() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        try await simulator.purchase(appleId: "us", productId: "com.example.pro.yearly", environment: .production)
        // Renews 2026-01-01T00:00Z, 365 days after the original purchase: Dec 31 in Los Angeles.
        try await simulator.advance(days: 366)

        // 49.99 USD, no tax: year 1 commission 14.997 → 14.99, proceeds 35.00; year 2 (15 %)
        // commission 7.4985 → 7.49, proceeds 42.50.
        let first = try #require(try Self.sales(simulator, day: "2024-12-31").first)
        #expect(first["Subscription"] == "New" && first["Developer Proceeds"] == "35.00")
        let renewal = try #require(try Self.sales(simulator, day: "2025-12-31").first)
        #expect(renewal["Subscription"] == "Renewal" && renewal["Developer Proceeds"] == "42.50")
    }
}
