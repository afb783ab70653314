import AppleSimulator
import Foundation
import Testing

/// The App Store Connect reports the simulator writes from its Production transactions, read
/// back column by column (this target does not depend on the ledger's parser).
@Suite("App Store Connect reports written by the simulator")
struct AppStoreConnectReportTests {
    static let salesColumns = [
        "Provider", "Provider Country", "SKU", "Developer", "Title", "Version", "Product Type Identifier", "Units",
        "Developer Proceeds", "Begin Date", "End Date", "Customer Currency", "Country Code", "Currency of Proceeds",
        "Apple Identifier", "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category",
        "CMB", "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client", "Order Type",
    ]

    /// The default catalog plus a yen product with its own SKU and Apple ID.
    static func configuration() -> AppleSimulator.Configuration {
        var configuration = SimulatorHarness.configuration()
        configuration.products = SimulatedProduct.defaultCatalog + [
            SimulatedProduct(
                productId: "com.example.gems", kind: .consumable, priceMilliunits: 120_000, currency: "JPY",
                sku: "GEMS_JP", appleIdentifier: "6740000001"),
        ]
        return configuration
    }

    /// Tab-separated lines from `header` (a column line) to the next blank line, as dictionaries.
    static func rows(_ text: String, headerStartingWith first: String) throws -> (columns: [String], rows: [[String: String]]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix(first + "\t") })
        let columns = lines[start].components(separatedBy: "\t")
        var rows: [[String: String]] = []
        for line in lines[(start + 1)...] {
            if line.isEmpty { break }
            let fields = line.components(separatedBy: "\t")
            #expect(fields.count == columns.count, "\(line)")
            rows.append(Dictionary(zip(columns, fields), uniquingKeysWith: { kept, _ in kept }))
        }
        return (columns, rows)
    }

    /// Buys coins ×2, remove-ads, a trial subscription and yen gems in Production and coins in
    /// Sandbox at 2025-01-01T00:00Z (Dec 31, 4 pm in Los Angeles), then refunds remove-ads a day
    /// later (Jan 1, 4 pm in Los Angeles).
    static func buyAndRefund(_ simulator: AppleSimulator) async throws {
        try await simulator.purchase(appleId: "buyer", productId: "com.example.coins100", environment: .production, quantity: 2)
        let removeAds = try await simulator.purchase(appleId: "buyer", productId: "com.example.removeads", environment: .production)
        try await simulator.purchase(appleId: "buyer", productId: "com.example.pro.monthly", environment: .production)
        try await simulator.purchase(appleId: "buyer", productId: "com.example.gems", environment: .production)
        try await simulator.purchase(appleId: "tester", productId: "com.example.coins100", environment: .sandbox)
        try await simulator.advance(days: 1)
        try await simulator.refund(transactionId: removeAds.transactionId)
    }

    @Test("the sales summary counts Production sales on their Pacific day and a refund on its own, without trials or Sandbox")
    func salesSummary() async throws {
        let simulator = try AppleSimulator(configuration: Self.configuration())
        try await Self.buyAndRefund(simulator)

        let sales = try Self.rows(try simulator.salesSummaryReport(day: "2024-12-31"), headerStartingWith: "Provider")
        #expect(sales.columns == Self.salesColumns)
        let bySKU = Dictionary(sales.rows.map { ($0["SKU"] ?? "", $0) }, uniquingKeysWith: { kept, _ in kept })
        #expect(bySKU.keys.sorted() == ["GEMS_JP", "com.example.coins100", "com.example.removeads"], "no trial, no Sandbox")

        let coins = try #require(bySKU["com.example.coins100"])
        #expect(coins["Units"] == "2", "the Sandbox purchase is not counted")
        #expect(coins["Customer Price"] == "0.99")
        // The USA price point's proceeds: no tax, commission 0.297 rounded down to 0.29.
        #expect(coins["Developer Proceeds"] == "0.70")
        #expect(coins["Product Type Identifier"] == "IA1")
        #expect(coins["Begin Date"] == "12/31/2024" && coins["End Date"] == "12/31/2024")
        #expect(coins["Customer Currency"] == "USD" && coins["Country Code"] == "US" && coins["Currency of Proceeds"] == "USD")
        #expect(coins["Parent Identifier"] == "com.example.app")
        let coinsId = try #require(coins["Apple Identifier"])
        #expect(coinsId.count == 10 && coinsId.allSatisfy(\.isNumber))
        let catalogCoins = try #require(SimulatedProduct.defaultCatalog.first { $0.productId == "com.example.coins100" })
        #expect(coinsId == catalogCoins.reportAppleIdentifier, "derived from the product id, the same in every run")

        #expect(bySKU["com.example.removeads"]?["Units"] == "1")
        #expect(bySKU["com.example.removeads"]?["Customer Price"] == "2.99")
        let gems = try #require(bySKU["GEMS_JP"])
        #expect(gems["Apple Identifier"] == "6740000001")
        // Yen bought in the USA storefront matches no price point of the simulator: 70 % of 120.
        #expect(gems["Customer Price"] == "120" && gems["Developer Proceeds"] == "84" && gems["Customer Currency"] == "JPY")
        #expect(gems["Country Code"] == "US", "the buyer's storefront, USA")

        let refunds = try Self.rows(try simulator.salesSummaryReport(day: "2025-01-01"), headerStartingWith: "Provider")
        #expect(refunds.rows.count == 1)
        #expect(refunds.rows.first?["SKU"] == "com.example.removeads")
        #expect(refunds.rows.first?["Units"] == "-1")
        #expect(refunds.rows.first?["Customer Price"] == "-2.99")
        #expect(refunds.rows.first?["Begin Date"] == "01/01/2025")

        let nothing = try Self.rows(try simulator.salesSummaryReport(day: "2025-01-02"), headerStartingWith: "Provider")
        #expect(nothing.rows.isEmpty)
    }

    @Test("the same product id sold in another app of the account is another product: its own Apple ID in both reports, its app as Parent Identifier")
    func anotherAppsProduct() async throws {
        let configuration = Self.configuration()
        let simulator = try AppleSimulator(configuration: configuration)
        let puzzle = "com.example.puzzle"
        try await simulator.purchase(appleId: "buyer", productId: "com.example.coins100", environment: .production)
        try await simulator.purchase(appleId: "puzzler", productId: "com.example.coins100", environment: .production, bundleId: puzzle)
        let product = try #require(configuration.products.first { $0.productId == "com.example.coins100" })
        let own = product.reportAppleIdentifier
        let other = product.reportAppleIdentifier(inApp: puzzle, primaryApp: configuration.bundleId)
        #expect(own != other)
        #expect(product.reportAppleIdentifier(inApp: configuration.bundleId, primaryApp: configuration.bundleId) == own)
        let sales = try Self.rows(try simulator.salesSummaryReport(day: "2024-12-31"), headerStartingWith: "Provider").rows
        #expect(Set(sales.map { "\($0["Parent Identifier"] ?? "") \($0["Apple Identifier"] ?? "")" }) == [
            "\(configuration.bundleId) \(own)", "\(puzzle) \(other)",
        ])
        let financial = try Self.rows(try simulator.financialReport(from: "2024-12-31", to: "2024-12-31"), headerStartingWith: "Transaction Date").rows
        #expect(Set(financial.compactMap { $0["Apple Identifier"] }) == [own, other])
    }

    @Test("the financial detail report has its period lines, one row per day and sale or return, and country totals")
    func financial() async throws {
        let simulator = try AppleSimulator(configuration: Self.configuration())
        try await Self.buyAndRefund(simulator)
        let text = try simulator.financialReport(from: "2024-12-31", to: "2025-01-01")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.prefix(3)) == ["Vendor Name\tSimulated Developer", "Start Date\t12/31/2024", "End Date\t01/01/2025"])

        let detail = try Self.rows(text, headerStartingWith: "Transaction Date")
        #expect(detail.rows.count == 4)
        let sales = detail.rows.filter { $0["Sale or Return"] == "S" }
        #expect(sales.map { $0["Transaction Date"] } == ["12/31/2024", "12/31/2024", "12/31/2024"])
        let coins = try #require(sales.first { $0["SKU"] == "com.example.coins100" })
        #expect(coins["Quantity"] == "2" && coins["Partner Share"] == "0.70" && coins["Extended Partner Share"] == "1.40")
        #expect(coins["Country of Sale"] == "US" && coins["Region"] == "Americas")
        let refund = try #require(detail.rows.last)
        #expect(refund["Sale or Return"] == "R" && refund["SKU"] == "com.example.removeads")
        #expect(refund["Transaction Date"] == "01/01/2025" && refund["Quantity"] == "-1")
        // USA 2.99: commission 0.897 rounded down to 0.89, proceeds 2.10.
        #expect(refund["Partner Share"] == "2.10" && refund["Extended Partner Share"] == "-2.10" && refund["Customer Price"] == "-2.99")

        let summary = try Self.rows(text, headerStartingWith: "Country Of Sale")
        #expect(summary.rows == [
            ["Country Of Sale": "US", "Partner Share Currency": "JPY", "Quantity": "1", "Extended Partner Share": "84"],
            ["Country Of Sale": "US", "Partner Share Currency": "USD", "Quantity": "2", "Extended Partner Share": "1.40"],
        ])
    }

    @Test("the control API serves both reports as tab-separated text and refuses a bad date")
    func controlRoutes() async throws {
        try await SimulatorHarness.withServer(Self.configuration()) { running in
            try await Self.buyAndRefund(running.simulator)
            let control = "\(running.baseURL)/control/reports"

            let expectedSales = try running.simulator.salesSummaryReport(day: "2024-12-31")
            let sales = try await RawHTTP.get("\(control)/sales?date=2024-12-31")
            #expect(sales.status == 200)
            #expect(String(decoding: sales.body, as: UTF8.self) == expectedSales)
            let expectedFinancial = try running.simulator.financialReport(from: "2024-12-31", to: "2025-01-01")
            let financial = try await RawHTTP.get("\(control)/financial?from=2024-12-31&to=2025-01-01")
            #expect(financial.status == 200)
            #expect(String(decoding: financial.body, as: UTF8.self) == expectedFinancial)

            #expect(try await RawHTTP.get("\(control)/sales").status == 400)
            #expect(try await RawHTTP.get("\(control)/sales?date=2025-02-30").status == 400)
            #expect(try await RawHTTP.get("\(control)/financial?from=2025-01-02&to=2025-01-01").status == 400)
        }
    }
}
