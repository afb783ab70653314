import Foundation
import Testing

@testable import AppStore
@testable import Ledger

/// App Store Connect reports read exactly, and compared with the ledger cell by cell.
@Suite("App Store Connect reports")
struct AppStoreReportTests {
    // MARK: - Fixtures

    /// The summary sales report's columns, in Apple's order.
    static let salesColumns = [
        "Provider", "Provider Country", "SKU", "Developer", "Title", "Version", "Product Type Identifier", "Units",
        "Developer Proceeds", "Begin Date", "End Date", "Customer Currency", "Country Code", "Currency of Proceeds",
        "Apple Identifier", "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category",
        "CMB", "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client", "Order Type",
    ]

    /// A sales row with the given fields (by column name); Apple pads the others with a space.
    static func salesRow(_ values: [String: String]) -> String {
        var row = ["Provider": "APPLE", "Provider Country": "US", "Developer": "Example Developer", "Device": "iPhone",
                   "Supported Platforms": "iOS", "Begin Date": "01/15/2025", "End Date": "01/15/2025"]
        row.merge(values) { _, given in given }
        return salesColumns.map { row[$0] ?? " " }.joined(separator: "\t")
    }

    static func iap(
        _ sku: String, type: String = "IA1", units: String, price: String, currency: String = "USD",
        country: String = "US", proceeds: String = "0.70", appleId: String = "6443000002"
    ) -> String {
        salesRow([
            "SKU": sku, "Title": sku, "Product Type Identifier": type, "Units": units, "Customer Price": price,
            "Customer Currency": currency, "Country Code": country, "Currency of Proceeds": currency,
            "Developer Proceeds": proceeds, "Apple Identifier": appleId, "Parent Identifier": "com.example.app",
        ])
    }

    static let salesReport = [
        salesColumns.joined(separator: "\t"),
        salesRow([
            "SKU": "com.example.app", "Title": "Example", "Version": "1.0", "Product Type Identifier": "1",
            "Units": "12", "Customer Price": "0", "Developer Proceeds": "0", "Customer Currency": "USD",
            "Country Code": "US", "Currency of Proceeds": "USD", "Apple Identifier": "6443000001",
        ]),
        iap("coins100", units: "3", price: "0.99"),
        iap("coins100", units: "-1", price: "-0.99"),
        iap("coins100", units: "2", price: "120", currency: "JPY", country: "JP", proceeds: "84"),
        iap("pro.monthly", type: "IAY", units: "1", price: "4.99", proceeds: "3.49", appleId: "6443000003"),
        "", "",
    ].joined(separator: "\r\n")

    static let financialColumns = [
        "Transaction Date", "Settlement Date", "Apple Identifier", "SKU", "Title", "Developer Name",
        "Product Type Identifier", "Country of Sale", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Customer Price", "Customer Currency", "Sale or Return", "Promo Code", "Order Type",
        "Region",
    ]

    static func financialReport(summary: [String]) -> String {
        ([
            "Vendor Name\tExample Developer",
            "Start Date\t12/29/2024",
            "End Date\t01/25/2025",
            financialColumns.joined(separator: "\t"),
            "01/15/2025\t01/17/2025\t6443000002\tcoins100\t100 Coins\tExample Developer\tIA1\tUS\t2\t0.70\t1.40\tUSD\t0.99\tUSD\tS\t\t\tAmericas",
            "01/20/2025\t01/22/2025\t6443000002\tcoins100\t100 Coins\tExample Developer\tIA1\tUS\t-1\t0.70\t-0.70\tUSD\t-0.99\tUSD\tR\t\t\tAmericas",
            "01/16/2025\t01/18/2025\t6443000003\tpro.monthly\tPro\tExample Developer\tIAY\tGB\t1\t2.91\t2.91\tGBP\t4.99\tGBP\tS\t\t\tEuro-Zone",
            "01/02/2025\t01/04/2025\t6443000001\tcom.example.app\tExample\tExample Developer\t1F\tUS\t1\t2.09\t2.09\tUSD\t2.99\tUSD\tS\t\t\tAmericas",
        ] + summary).joined(separator: "\n")
    }

    static let countrySummary = [
        "Country Of Sale\tPartner Share Currency\tQuantity\tExtended Partner Share",
        "US\tUSD\t2\t2.79",
        "GB\tGBP\t1\t2.91",
    ]

    // MARK: - Parsing

    @Test("a summary sales report keeps in-app purchase lines only, reads a return and a zero-decimal price exactly")
    func salesSummary() throws {
        let report = try AppStoreReport.parse("\u{FEFF}" + Self.salesReport)
        #expect(report.kind == .sales)
        #expect(report.periodStart == "2025-01-15")
        #expect(report.periodEnd == "2025-01-15")
        #expect(report.lines.map(\.sku) == ["coins100", "coins100", "coins100", "pro.monthly"], "the app download is skipped")
        #expect(report.lines[0] == AppStoreReportLine(
            periodStart: "2025-01-15", periodEnd: "2025-01-15", sku: "coins100", appleIdentifier: "6443000002",
            title: "coins100", productType: "IA1", country: "US", currency: "USD", customerPriceMinor: 99, units: 3,
            isReturn: false, proceedsMinor: 70, proceedsCurrency: "USD"))
        let refund = report.lines[1]
        #expect(refund.isReturn && refund.units == -1 && refund.customerPriceMinor == 99)
        let yen = report.lines[2]
        #expect(yen.currency == "JPY" && yen.customerPriceMinor == 120 && yen.units == 2 && yen.proceedsMinor == 84)
        #expect(report.lines[3].productType == "IAY" && report.lines[3].customerPriceMinor == 499)
    }

    @Test("columns are found by name: reordered and extra columns read the same")
    func columnsByName() throws {
        let header = ["Units", "Customer Price", "Begin Date", "End Date", "Customer Currency", "Country Code", "SKU",
                      "Title", "Product Type Identifier", "Apple Identifier", "New Column"].joined(separator: "\t")
        let row = ["-2", "1.99", "02/01/2025", "02/07/2025", "EUR", "FR", "gems", "Gems", "IA1", "42", "x"].joined(separator: "\t")
        let report = try AppStoreReport.parse(header + "\n" + row + "\n")
        #expect(report.lines == [AppStoreReportLine(
            periodStart: "2025-02-01", periodEnd: "2025-02-07", sku: "gems", appleIdentifier: "42", title: "Gems",
            productType: "IA1", country: "FR", currency: "EUR", customerPriceMinor: 199, units: -2, isReturn: true)])
    }

    @Test("a financial detail report reads its period lines and rows, and stops before the country summary",
          arguments: [[""] + AppStoreReportTests.countrySummary, AppStoreReportTests.countrySummary, ["", "Total_Rows\t3"], ["", "", ""]])
    func financial(summary: [String]) throws {
        let report = try AppStoreReport.parse(Self.financialReport(summary: summary))
        #expect(report.kind == .financial)
        #expect(report.periodStart == "2024-12-29")
        #expect(report.periodEnd == "2025-01-25")
        #expect(report.lines.count == 3, "the paid app row (1F) is skipped")
        #expect(report.lines.allSatisfy { $0.periodStart == "2024-12-29" && $0.periodEnd == "2025-01-25" })
        #expect(report.lines[0] == AppStoreReportLine(
            periodStart: "2024-12-29", periodEnd: "2025-01-25", sku: "coins100", appleIdentifier: "6443000002",
            title: "100 Coins", productType: "IA1", country: "US", currency: "USD", customerPriceMinor: 99, units: 2,
            isReturn: false, proceedsMinor: 70, proceedsCurrency: "USD"))
        #expect(report.lines[1].isReturn && report.lines[1].units == -1 && report.lines[1].customerPriceMinor == 99)
        #expect(report.lines[2].currency == "GBP" && report.lines[2].proceedsMinor == 291)
    }

    @Test("without Start and End Date lines, a financial report's period runs from its first to its last transaction")
    func financialPeriodFromRows() throws {
        let text = Self.financialReport(summary: []).split(separator: "\n").dropFirst(3).joined(separator: "\n")
        let report = try AppStoreReport.parse(text)
        #expect(report.periodStart == "2025-01-02")
        #expect(report.periodEnd == "2025-01-20")
    }

    /// (report text, fragments the error must contain).
    static let unreadable: [(String, [String])] = [
        ([salesColumns.joined(separator: "\t"), iap("coins100", units: "1", price: "0.995")].joined(separator: "\n"),
         ["line 2", "Customer Price", "0.995", "USD"]),
        ([salesColumns.joined(separator: "\t"), iap("coins100", units: "1", price: "120.5", currency: "JPY")].joined(separator: "\n"),
         ["line 2", "Customer Price", "JPY"]),
        ([salesColumns.filter { $0 != "Customer Price" }.joined(separator: "\t"), "APPLE"].joined(separator: "\n"),
         ["line 1", "no column \"Customer Price\""]),
        ([salesColumns.joined(separator: "\t"), iap("coins100", units: "three", price: "0.99")].joined(separator: "\n"),
         ["line 2", "Units", "three"]),
        ([salesColumns.joined(separator: "\t"), "", salesRow(["Begin Date": "2025-01-15", "Product Type Identifier": "IA1"])]
            .joined(separator: "\n"),
         ["line 3", "Begin Date", "MM/DD/YYYY"]),
        (financialReport(summary: []).replacingOccurrences(of: "\tS\t\t\tEuro-Zone", with: "\tX\t\t\tEuro-Zone"),
         ["line 7", "Sale or Return"]),
        ("Date\tEvent\tCounts\n2026-07-29\tTap\t3\n", ["not an App Store Connect sales summary or financial report"]),
        ("\n\n", ["empty"]),
    ]

    @Test("an unreadable report is refused, naming the line and column", arguments: AppStoreReportTests.unreadable)
    func unreadableReport(text: String, fragments: [String]) {
        do {
            let report = try AppStoreReport.parse(text)
            Issue.record("read \(report.lines.count) lines; expected an error with \(fragments)")
        } catch {
            // `parse` throws only AppStoreReportError (typed throws).
            for fragment in fragments { #expect(error.message.contains(fragment), "\(error.message)") }
        }
    }

    @Test("amounts are read digit by digit; zeros past the currency's digits carry no value")
    func decimals() throws {
        func minor(_ text: String, _ currency: String) throws -> Int64 {
            try ReportValue.minorUnits(text, currency: currency, line: 1, column: "Customer Price")
        }
        #expect(try minor("0.99", "USD") == 99)
        #expect(try minor("-1.99", "USD") == -199)
        #expect(try minor("120", "USD") == 12_000)
        #expect(try minor("4.5", "EUR") == 450)
        #expect(try minor("120", "JPY") == 120)
        #expect(try minor("1.990", "USD") == 199)
        #expect(try minor("99.000", "MXN") == 9_900)
        #expect(throws: AppStoreReportError.self) { try minor("1,99", "EUR") }
        #expect(throws: AppStoreReportError.self) { try minor("1.", "USD") }
        #expect(throws: AppStoreReportError.self) { try minor("", "USD") }
    }

    // MARK: - Comparing with the ledger

    static let catalog = [
        "coins100": "com.example.coins100", "removeads": "com.example.removeads", "pro.monthly": "com.example.pro.monthly",
    ]

    static func product(_ sku: String, _ appleIdentifier: String) -> String? { catalog[sku] }

    static func appleLine(_ sku: String, units: Int64, price: Int64, country: String = "US", day: String = "2025-01-15") -> AppStoreReportLine {
        AppStoreReportLine(
            periodStart: day, periodEnd: day, sku: sku, appleIdentifier: "1", title: sku, productType: "IA1",
            country: country, currency: "USD", customerPriceMinor: price, units: units, isReturn: units < 0)
    }

    static func ledgerLine(_ id: String, _ productId: String, price: Int64, units: Int64 = 1, day: String = "2025-01-15") -> LedgerReportLine {
        LedgerReportLine(
            transactionId: id, productId: productId, day: day, currency: "USD", unitPriceMinor: price, units: units,
            isRefund: units < 0)
    }

    static let dailyReport = AppStoreReport(
        kind: .sales, periodStart: "2025-01-15", periodEnd: "2025-01-15",
        lines: [
            appleLine("coins100", units: 2, price: 99), appleLine("coins100", units: 1, price: 99, country: "PR"),
            appleLine("coins100", units: -1, price: 99), appleLine("removeads", units: 1, price: 299),
        ])

    @Test("a sale missing from the ledger and one missing from Apple are two differences, with the ledger's transactions")
    func differences() {
        let ledger = [
            Self.ledgerLine("t1", "com.example.coins100", price: 99), Self.ledgerLine("t2", "com.example.coins100", price: 99),
            Self.ledgerLine("t3", "com.example.coins100", price: 99, units: -1),
            Self.ledgerLine("t5", "com.example.removeads", price: 299),
            Self.ledgerLine("t9", "com.example.pro.monthly", price: 499),
            Self.ledgerLine("t10", "com.example.pro.monthly", price: 499, day: "2025-01-16"),
        ]
        let result = ReportReconciliation.compare(Self.dailyReport, ledger: ledger, product: Self.product)
        #expect(result.cellsCompared == 4)
        #expect(result.cellsMatching == 2, "the refund and removeads agree; t10 is outside the report's day")
        #expect(result.unknownProducts.isEmpty)
        // The ledger's lines name no country, so each cell sums Apple's countries; Apple's rows
        // here state no proceeds (nil), and a cell Apple has no row in pays nothing (0).
        #expect(result.differences == [
            ReportCellComparison(
                cell: ReportCell(periodStart: "2025-01-15", periodEnd: "2025-01-15", productId: "com.example.coins100",
                                 currency: "USD", unitPriceMinor: 99, isReturn: false),
                appleUnits: 3, ledgerUnits: 2, appleProceedsMinor: nil, ledgerProceedsMinor: 0, ledgerProceedsEstimated: true,
                appleCountries: ["PR", "US"], ledgerTransactions: ["t1", "t2"]),
            ReportCellComparison(
                cell: ReportCell(periodStart: "2025-01-15", periodEnd: "2025-01-15", productId: "com.example.pro.monthly",
                                 currency: "USD", unitPriceMinor: 499, isReturn: false),
                appleUnits: 0, ledgerUnits: 1, appleProceedsMinor: 0, ledgerProceedsMinor: 0, ledgerProceedsEstimated: true,
                appleCountries: [], ledgerTransactions: ["t9"]),
        ])
    }

    @Test("matching data has no differences, refunds counted as magnitudes on both sides, free units left out")
    func matching() {
        var report = Self.dailyReport
        report.lines.append(Self.appleLine("pro.monthly", units: 4, price: 0))
        let ledger = [
            Self.ledgerLine("t1", "com.example.coins100", price: 99), Self.ledgerLine("t2", "com.example.coins100", price: 99, units: 2),
            Self.ledgerLine("t3", "com.example.coins100", price: 99, units: -1),
            Self.ledgerLine("t5", "com.example.removeads", price: 299),
        ]
        let result = ReportReconciliation.compare(report, ledger: ledger, product: Self.product)
        #expect(result.differences.isEmpty)
        #expect(result.cellsCompared == 3)
        #expect(result.cellsMatching == 3)
    }

    @Test("a developer account's report with three apps' lines, two served: each line reconciled as its app's, the third app's listed apart")
    func threeAppsTwoServed() throws {
        var third = Self.appleLine("THIRD-GEMS", units: 5, price: 499)
        third.proceedsMinor = 349
        third.title = "Gems"
        let report = AppStoreReport(
            kind: .sales, periodStart: "2025-01-15", periodEnd: "2025-01-15",
            lines: [Self.appleLine("GAME-COINS", units: 2, price: 99), Self.appleLine("PUZ-COINS", units: 1, price: 199), third])
        func line(_ id: String, _ app: String, price: Int64) -> LedgerReportLine {
            var line = Self.ledgerLine(id, "com.example.coins100", price: price)
            line.bundleId = app
            return line
        }
        let mapping: [String: (bundleId: String, productId: String)] = [
            "GAME-COINS": ("com.acme.game", "com.example.coins100"), "PUZ-COINS": ("com.acme.puzzle", "com.example.coins100"),
        ]
        let ledger = [line("g1", "com.acme.game", price: 99), line("g2", "com.acme.game", price: 99), line("p1", "com.acme.puzzle", price: 199)]
        let result = ReportReconciliation.compare(report, ledger: ledger) { sku, _ in mapping[sku] }
        // The same product id in two apps is two cells, each agreeing with its app's sales.
        #expect(result.cells.map { "\($0.cell.bundleId) \($0.cell.productId) \($0.appleUnits)/\($0.ledgerUnits)" } == [
            "com.acme.game com.example.coins100 2/2", "com.acme.puzzle com.example.coins100 1/1",
        ])
        #expect(result.differences.isEmpty)
        #expect(result.otherApps.map { "\($0.sku) \($0.title) \($0.units) \($0.proceedsMinor ?? -1) \($0.currency)" } == ["THIRD-GEMS Gems 5 1745 USD"])
        #expect(result.agrees, "another app's lines are listed apart, not differences")
        // As `reconcile-reports --format json` writes them (CONTRACT's keys; no money stated is null).
        var noMoney = result.otherApps[0]
        noMoney.proceedsMinor = nil
        let json = String(decoding: try LedgerJSON.encoder.encode([noMoney]), as: UTF8.self)
        #expect(json == #"[{"apple_identifier":"1","currency":"USD","proceeds_minor":null,"sku":"THIRD-GEMS","title":"Gems","units":5}]"#, "\(json)")

        // A puzzle sale Apple did not report is a difference of the puzzle's, not the game's.
        let missing = ReportReconciliation.compare(report, ledger: ledger + [line("p2", "com.acme.puzzle", price: 199)]) { sku, _ in mapping[sku] }
        #expect(missing.differences.map { "\($0.cell.bundleId) \($0.appleUnits)/\($0.ledgerUnits)" } == ["com.acme.puzzle 1/2"])
        #expect(!missing.agrees)
    }

    @Test("a SKU no product maps to is listed, and its cell is keyed by the SKU")
    func unknownProduct() {
        let report = AppStoreReport(
            kind: .sales, periodStart: "2025-01-15", periodEnd: "2025-01-15",
            lines: [Self.appleLine("mystery", units: 1, price: 99)])
        let result = ReportReconciliation.compare(report, ledger: [], product: Self.product)
        #expect(result.unknownProducts == ["mystery"])
        #expect(result.differences.map(\.cell.productId) == ["sku:mystery"])
    }

    @Test("in a financial report every ledger line of the fiscal period goes to the period's cell")
    func fiscalPeriod() throws {
        let report = try AppStoreReport.parse(Self.financialReport(summary: Self.countrySummary))
        let ledger = [
            LedgerReportLine(transactionId: "a", productId: "com.example.coins100", day: "2025-01-03", currency: "USD",
                             unitPriceMinor: 99, units: 1, isRefund: false, proceedsMinor: 70, proceedsEstimated: false),
            LedgerReportLine(transactionId: "b", productId: "com.example.coins100", day: "2025-01-24", currency: "USD",
                             unitPriceMinor: 99, units: 1, isRefund: false, proceedsMinor: 70, proceedsEstimated: false),
            LedgerReportLine(transactionId: "c", productId: "com.example.coins100", day: "2025-01-10", currency: "USD",
                             unitPriceMinor: 99, units: -1, isRefund: true, proceedsMinor: 70, proceedsEstimated: false),
            LedgerReportLine(transactionId: "d", productId: "com.example.pro.monthly", day: "2024-12-29", currency: "GBP",
                             unitPriceMinor: 499, units: 1, isRefund: false, proceedsMinor: 291, proceedsEstimated: false),
            LedgerReportLine(transactionId: "e", productId: "com.example.pro.monthly", day: "2025-01-26", currency: "GBP",
                             unitPriceMinor: 499, units: 1, isRefund: false, proceedsMinor: 291, proceedsEstimated: false),
        ]
        let result = ReportReconciliation.compare(report, ledger: ledger, product: Self.product)
        #expect(result.kind == .financial)
        #expect(result.differences.isEmpty, "e is after the fiscal month: \(result.differences)")
        #expect(result.cellsMatching == 3)
    }

    static func pricedAppleLine(_ country: String, units: Int64, price: Int64, proceeds: Int64, currency: String = "EUR") -> AppStoreReportLine {
        AppStoreReportLine(
            periodStart: "2025-01-15", periodEnd: "2025-01-15", sku: "coins100", appleIdentifier: "1", title: "coins100", productType: "IA1",
            country: country, currency: currency, customerPriceMinor: price, units: units, isReturn: units < 0,
            proceedsMinor: proceeds, proceedsCurrency: currency)
    }

    static func pricedLedgerLine(_ id: String, country: String, price: Int64, proceeds: Int64, units: Int64 = 1, currency: String = "EUR") -> LedgerReportLine {
        LedgerReportLine(
            transactionId: id, productId: "com.example.coins100", day: "2025-01-15", currency: currency, unitPriceMinor: price, units: units,
            isRefund: units < 0, country: country, proceedsMinor: proceeds, proceedsEstimated: false)
    }

    @Test("cells are kept per country (Apple's alpha-2 as the ledger's alpha-3) and compared in money: one altered proceeds cell is the one difference, with its transactions")
    func money() {
        let report = AppStoreReport(kind: .sales, periodStart: "2025-01-15", periodEnd: "2025-01-15", lines: [
            Self.pricedAppleLine("DE", units: 2, price: 99, proceeds: 59),
            Self.pricedAppleLine("FR", units: 1, price: 99, proceeds: 58),
            Self.pricedAppleLine("FR", units: -1, price: 99, proceeds: 58),
        ])
        let ledger = [
            Self.pricedLedgerLine("d1", country: "DEU", price: 99, proceeds: 59), Self.pricedLedgerLine("d2", country: "DEU", price: 99, proceeds: 59),
            Self.pricedLedgerLine("f1", country: "FRA", price: 99, proceeds: 58),
            Self.pricedLedgerLine("f2", country: "FRA", price: 99, proceeds: 58, units: -1),
        ]
        let agreeing = ReportReconciliation.compare(report, ledger: ledger, product: Self.product)
        #expect(agreeing.agrees, "\(agreeing.differences)")
        #expect(agreeing.cells.map(\.cell.country) == ["DEU", "FRA", "FRA"])
        #expect(agreeing.cells.first?.appleProceedsMinor == 118)

        var altered = report
        altered.lines[0].proceedsMinor = 60
        let result = ReportReconciliation.compare(altered, ledger: ledger, product: Self.product)
        #expect(result.cellsMatching == 2)
        let difference = result.differences.first
        #expect(result.differences.count == 1)
        #expect(difference?.cell.country == "DEU")
        #expect(difference?.appleUnits == 2 && difference?.ledgerUnits == 2)
        #expect(difference?.appleProceedsMinor == 120 && difference?.ledgerProceedsMinor == 118)
        #expect(difference?.differsInMoneyOnly == true)
        #expect(difference?.ledgerTransactions == ["d1", "d2"])
    }

    @Test("a ledger sale of unknown storefront sums its cell's countries on both sides, so it never shows as two differences that cancel")
    func unknownCountry() {
        let report = AppStoreReport(kind: .sales, periodStart: "2025-01-15", periodEnd: "2025-01-15", lines: [
            Self.pricedAppleLine("DE", units: 1, price: 99, proceeds: 59),
            Self.pricedAppleLine("FR", units: 1, price: 99, proceeds: 58),
        ])
        let ledger = [
            Self.pricedLedgerLine("d1", country: "DEU", price: 99, proceeds: 59),
            Self.pricedLedgerLine("x1", country: Storefront.unknown, price: 99, proceeds: 58),
        ]
        let result = ReportReconciliation.compare(report, ledger: ledger, product: Self.product)
        #expect(result.cells.count == 1)
        #expect(result.cells.first?.cell.country == "")
        #expect(result.agrees, "\(result.cells)")
    }

    @Test("proceeds Apple pays in another currency than the customer's are not compared; the units still are")
    func otherProceedsCurrency() {
        var line = Self.pricedAppleLine("DE", units: 1, price: 99, proceeds: 64)
        line.proceedsCurrency = "USD"
        let report = AppStoreReport(kind: .sales, periodStart: "2025-01-15", periodEnd: "2025-01-15", lines: [line])
        let result = ReportReconciliation.compare(report, ledger: [Self.pricedLedgerLine("d1", country: "DEU", price: 99, proceeds: 59)], product: Self.product)
        #expect(result.agrees)
        #expect(result.cells.first?.appleProceedsMinor == nil && result.cells.first?.ledgerProceedsMinor == nil)
        #expect(result.cells.first?.proceedsCurrency == "USD")
    }
}
