import AppStoreClient
import AppleSimulator
import Foundation
import Ledger
import LedgerProjections
@testable import LedgerQueries
import LedgerService
import LedgerStore
import Logging
import Testing

/// Issue "Money as Apple pays it": a month of sales in six storefronts, a prorated refund, a
/// family revocation, a commitment plan and a tax change mid-month. The ledger's proceeds are the
/// simulator's price points to the cent; the simulator's sales and financial reports, written
/// from its own price points, reconcile in units and in money; one altered proceeds cell is the
/// one difference, with its transactions; a replay reproduces every figure.
@Suite("A month of money, to the cent")
struct MoneyMonthTests {
    /// 2026-10-01T12:00:00Z.
    static let start = Date(timeIntervalSince1970: 1_790_856_000)
    /// Germany's VAT drops from 19% to 16% at 2026-10-15T00:00:00Z.
    static let taxChange = TaxChange(territory: "DEU", from: Date(timeIntervalSince1970: 1_792_022_400), ratePercent: 16)
    static let storefronts = ["USA", "DEU", "FRA", "GBR", "JPN", "BRA"]
    static let quiet: Logger = {
        var logger = Logger(label: "tests.money-month")
        logger.logLevel = .warning
        return logger
    }()

    /// The simulator's catalog with App Store Connect's ids, so price points are read and the
    /// reports' SKUs map to products.
    static func catalog(_ ledger: LedgerHarness) throws -> Data {
        let products: [[String: Any]] = ledger.simulator.configuration.products.map {
            ["product_id": $0.productId, "kind": $0.kind.rawValue, "apple_id": $0.reportAppleIdentifier, "sku": $0.reportSKU,
             "price_minor": $0.priceMilliunits / 10, "currency": $0.currency]
        }
        return try JSONSerialization.data(withJSONObject: ["products": products])
    }

    static func refreshPricePoints(_ ledger: LedgerHarness) async throws {
        let configuration = try #require(ledger.appStoreConnect)
        let client = try await AppStoreConnectClient(configuration: configuration, clock: .system, logger: quiet)
        let summaries = try await ledger.server.service.refreshPricePoints(using: client, metadata: RequestMetadata(actor: "test"))
        #expect(summaries.allSatisfy { if case .refreshed = $0.outcome { true } else { false } }, "\(summaries)")
    }

    /// Buys `product` on `user`'s device in `storefront` and posts the signed transaction.
    @discardableResult
    static func buy(_ ledger: LedgerHarness, _ user: String, _ product: String, in storefront: String) async throws -> PurchaseResult {
        let order = try await ledger.post("/v1/orders", ["user_id": user, "product_id": product])
        let token = try #require(order.json["app_account_token"] as? String, "\(order.status) \(order.json)")
        let purchase = try await ledger.simulator.purchase(
            appleId: "apple-\(user)", productId: product, environment: .production, appAccountToken: UUID(uuidString: token),
            storefront: storefront)
        let answer = try await ledger.post("/v1/transactions", ["user_id": user, "signed_transaction": purchase.signedTransaction])
        #expect(answer.outcome == "delivered", "\(answer.status) \(answer.json)")
        return purchase
    }

    static func revenue(_ ledger: LedgerHarness, groupBy: String) async throws -> [[String: any Sendable]] {
        let answer = try await ledger.get("/v1/reports/revenue?from=2026-09-01&to=2026-12-31&group_by=\(groupBy)", token: LedgerHarness.financeToken)
        #expect(answer.status == 200, "\(answer.json)")
        return (answer.json["rows"] as? [[String: any Sendable]]) ?? []
    }

    static func reconcile(_ ledger: LedgerHarness, _ text: String, name: String) async throws -> ReportReconciliation {
        let imported = try await ReportImporter(store: ledger.server.service.log.store).importReport(
            Array(text.utf8), fileName: name, metadata: RequestMetadata(actor: "test"))
        return try #require(await ledger.server.reads.reconciliation(ofReport: imported.report.documentSha256)).result
    }

    /// The financial report with one row's `Partner Share` changed from `from` to `to`: the row
    /// of `sku` sold in `country` (alpha-2).
    static func altering(_ text: String, sku: String, country: String, from: String, to: String) throws -> String {
        var lines = text.components(separatedBy: "\n")
        let headerIndex = try #require(lines.firstIndex { $0.contains("Partner Share") && $0.contains("Country of Sale") })
        let header = lines[headerIndex].components(separatedBy: "\t")
        let (skuColumn, countryColumn, shareColumn) = (
            try #require(header.firstIndex(of: "SKU")), try #require(header.firstIndex(of: "Country of Sale")),
            try #require(header.firstIndex(of: "Partner Share")))
        let rowIndex = try #require(lines.indices.first { index in
            let fields = lines[index].components(separatedBy: "\t")
            return index > headerIndex && fields.count == header.count && fields[skuColumn] == sku && fields[countryColumn] == country
                && fields[shareColumn] == from
        }, "no \(sku) row in \(country) paying \(from)")
        var fields = lines[rowIndex].components(separatedBy: "\t")
        fields[shareColumn] = to
        lines[rowIndex] = fields.joined(separator: "\t")
        return lines.joined(separator: "\n")
    }

    @Test("six storefronts, a tax change, a 25% refund, a family revocation and a commitment: proceeds to the cent, reports agree in units and money, one altered cell shows alone, a replay changes nothing")
    func month() async throws {
        try await LedgerHarness.with(appleStart: Self.start, askConnect: true, taxChanges: [Self.taxChange]) { ledger in
            _ = try await ledger.server.service.loadCatalog(try Self.catalog(ledger), metadata: RequestMetadata(actor: "test"))
            try await Self.refreshPricePoints(ledger)

            // The first two weeks: every storefront buys coins, the ad removal and a monthly plan;
            // Great Britain also a 12-month commitment billed monthly.
            var bought: [String: PurchaseResult] = [:]
            for (index, storefront) in Self.storefronts.enumerated() {
                bought["coins-\(storefront)"] = try await Self.buy(ledger, "c-\(storefront)", "com.example.coins100", in: storefront)
                bought["ads-\(storefront)"] = try await Self.buy(ledger, "a-\(storefront)", "com.example.removeads", in: storefront)
                bought["pro-\(storefront)"] = try await Self.buy(ledger, "p-\(storefront)", "com.example.pro.monthly", in: storefront)
                _ = try await ledger.simulator.advance(days: index == 0 ? 1 : 2)
            }
            let committed = try await Self.buy(ledger, "k-GBR", "com.example.pro.committed", in: "GBR")
            #expect(committed.transaction.currency == "GBP")

            // Germany's VAT changes on 15 October; App Store Connect's table changes with it.
            _ = try await ledger.simulator.advance(days: 14 - 11)
            #expect(ledger.simulator.nowMilliseconds >= Int64(Self.taxChange.from.timeIntervalSince1970 * 1000))
            try await Self.refreshPricePoints(ledger)
            let germanAfter = try await Self.buy(ledger, "c-DEU-2", "com.example.coins100", in: "DEU")

            // A quarter of France's ad removal refunded; the USA's revoked by Family Sharing.
            _ = try await ledger.simulator.refund(transactionId: try #require(bought["ads-FRA"]).transactionId, revocationPercentage: 25_000)
            _ = try await ledger.simulator.revoke(transactionId: try #require(bought["ads-USA"]).transactionId)
            try await ledger.eventually("the refund and the revocation are recorded") { try await ledger.count("PurchaseRefunded") == 2 }

            // To the month's end and past it (12 November): each monthly plan's trial converts to a
            // paid period and renews (some twice), and the commitment bills its second instalment.
            _ = try await ledger.simulator.advance(days: 29)
            let subscribers = Self.storefronts.map { "apple-p-\($0)" } + ["apple-k-GBR"]
            let renewals = subscribers.reduce(0) { $0 + ledger.simulator.transactions(of: $1).count - 1 }
            #expect(renewals >= 7, "six trials converted, one instalment, and some renewed")
            try await ledger.eventually("every renewal is seen", within: .seconds(60)) { try await ledger.count("SubscriptionRenewalSeen") == renewals }

            // Proceeds are the price points', not 70%: USA 0.99 pays 0.70; Germany 0.99 paid 0.59
            // at 19% (0.99 ÷ 1.19 = 0.8319, commission 0.24 rounded down) and 0.60 at 16%
            // (0.8534, 0.25); their tax is 0.99 − proceeds ÷ 0.7: 0.15, then 0.13.
            let byCountry = Dictionary(try await Self.revenue(ledger, groupBy: "country").map { (($0["key"] as? String) ?? "?", $0) }, uniquingKeysWith: { a, _ in a })
            #expect(Set(byCountry.keys) == Set(Self.storefronts), "\(byCountry.keys)")
            for row in byCountry.values {
                #expect(row["proceeds_estimated"] as? Bool == false, "every sale has a price point: \(row)")
                let n = { (field: String) in (row[field] as? Int) ?? Int.min }
                #expect(n("net_minor") == n("tax_minor") + n("commission_minor") + n("proceeds_minor"), "\(row)")
            }
            #expect(byCountry["USA"]?["tax_minor"] as? Int == 0, "US prices carry no VAT")
            #expect((byCountry["DEU"]?["tax_minor"] as? Int ?? 0) > 0)
            #expect(byCountry["JPN"]?["currency"] as? String == "JPY" && byCountry["BRA"]?["currency"] as? String == "BRL")

            let lines = try await ledger.server.reads.ledgerReportLines(from: "2026-09-30", to: "2026-11-30", commission: .standard)
            let coinsDE = lines.filter { $0.productId == "com.example.coins100" && $0.country == "DEU" }.sorted { $0.day < $1.day }
            #expect(coinsDE.map(\.proceedsMinor) == [59, 60], "before and after the tax change: \(coinsDE)")
            #expect(coinsDE.last?.transactionId == germanAfter.transactionId)
            #expect(lines.first { $0.transactionId == bought["coins-USA"]?.transactionId }?.proceedsMinor == 70)
            let refundFR = try #require(lines.first { $0.isRefund && $0.transactionId == bought["ads-FRA"]?.transactionId })
            // FRA 2.99 EUR at 20%: 2.4917 net, commission 0.74, proceeds 1.75; a quarter: 0.75 and 0.44.
            #expect(refundFR.unitPriceMinor == 75 && refundFR.proceedsMinor == 44, "\(refundFR)")
            #expect(!lines.contains { $0.isRefund && $0.transactionId == bought["ads-USA"]?.transactionId }, "Family Sharing moves no money")

            // The simulator's reports, written from its own price points, agree in units and money.
            let financial = try ledger.simulator.financialReport(from: "2026-10-01", to: "2026-11-13")
            let result = try await Self.reconcile(ledger, financial, name: "financial.txt")
            #expect(result.unknownProducts.isEmpty)
            #expect(result.agrees, "\(result.differences)")
            #expect(result.cells.allSatisfy { $0.appleProceedsMinor != nil && !$0.cell.country.isEmpty }, "every cell compared in money, by country")
            #expect(Set(result.cells.map(\.cell.country)) == Set(Self.storefronts))
            // And in money over the whole month: the ledger's proceeds per currency are Apple's.
            var apple: [String: Int64] = [:]
            for cell in result.cells { apple[cell.proceedsCurrency, default: 0] += (cell.cell.isReturn ? -1 : 1) * (cell.appleProceedsMinor ?? 0) }
            let totals = Dictionary(try await Self.revenueTotals(ledger).map { ($0.currency, $0.proceeds) }, uniquingKeysWith: +)
            #expect(totals == apple, "revenue's proceeds by currency equal the financial report's")

            var dailyCells = 0
            for day in 0..<44 {
                let date = RevenueDay.of(Int64(Self.start.timeIntervalSince1970 * 1000) + Int64(day) * 86_400_000)
                let text = try ledger.simulator.salesSummaryReport(day: date)
                // Apple writes no report for a day without sales; the simulator's has only its header.
                guard text.split(separator: "\n").count > 1 else { continue }
                let daily = try await Self.reconcile(ledger, text, name: "sales-\(date).txt")
                #expect(daily.agrees, "\(date): \(daily.differences)")
                dailyCells += daily.cellsCompared
            }
            #expect(dailyCells >= result.cells.count, "the daily reports compared every sale too")

            // One proceeds cell altered in Apple's file: that cell alone differs, with its sales.
            let altered = try Self.altering(financial, sku: "com.example.coins100", country: "DE", from: "0.59", to: "0.58")
            let differing = try await Self.reconcile(ledger, altered, name: "financial-altered.txt")
            #expect(differing.differences.count == 1, "\(differing.differences)")
            let cell = try #require(differing.differences.first)
            #expect(cell.cell.productId == "com.example.coins100" && cell.cell.country == "DEU" && !cell.cell.isReturn)
            #expect(cell.differsInMoneyOnly && cell.appleProceedsMinor == 118 && cell.ledgerProceedsMinor == 119)
            #expect(Set(cell.ledgerTransactions) == Set(coinsDE.map(\.transactionId)))

            // A replay reproduces every figure: the rebuild differs from the live rows in nothing.
            let before = try Self.canonical(try await Self.revenue(ledger, groupBy: "country"))
            let replay = try await ProjectionReplay(conninfo: ledger.conninfo, clock: ledger.server.service.clock, logger: Self.quiet).run(dryRun: false)
            #expect(replay.changes.isEmpty, "\(replay.changes)")
            #expect(try Self.canonical(try await Self.revenue(ledger, groupBy: "country")) == before)
            #expect(before.contains("\"proceeds_minor\""))
        }
    }

    /// Rows as JSON with sorted keys, to compare two reads.
    static func canonical(_ rows: [[String: any Sendable]]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.sortedKeys]), as: UTF8.self)
    }

    static func revenueTotals(_ ledger: LedgerHarness) async throws -> [(currency: String, proceeds: Int64)] {
        let answer = try await ledger.get("/v1/reports/revenue?from=2026-09-01&to=2026-12-31", token: LedgerHarness.financeToken)
        return ((answer.json["totals"] as? [[String: any Sendable]]) ?? []).map {
            (($0["currency"] as? String) ?? "?", Int64(($0["proceeds_minor"] as? Int) ?? Int.min))
        }
    }
}
