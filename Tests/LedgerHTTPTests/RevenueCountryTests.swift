import AppleSimulator
import Foundation
import Ledger
import LedgerProjections
import LedgerQueries
import LedgerService
import LedgerStore
import Logging
import Testing

/// docs/configuration.md "Money": "A sale's country is its storefront (signed transactions carry it; for a
/// sale seen only in a receipt, the ledger asks Apple's Get Transaction Info once ...)", and the
/// revenue report's `group_by=country`, `tax_minor` and `proceeds_estimated`.
@Suite("Revenue by country: the storefront Apple signed, or Get Transaction Info's for a receipt's sale")
struct RevenueCountryTests {
    static let allTime = "from=2000-01-01&to=2100-12-31"

    /// An order for `product`, bought on the simulated device of `user`'s Apple ID in
    /// `storefront` (the Apple ID's, `USA`, when nil), in Production.
    static func orderAndBuy(_ ledger: LedgerHarness, user: String, product: String, storefront: String? = nil) async throws -> PurchaseResult {
        let order = try await ledger.post("/v1/orders", ["user_id": user, "product_id": product])
        let token = try #require(order.json["app_account_token"] as? String, "\(order.status) \(order.json)")
        return try await ledger.simulator.purchase(
            appleId: "apple-\(user)", productId: product, environment: .production, appAccountToken: UUID(uuidString: token),
            storefront: storefront)
    }

    /// The report's rows by their key (a country).
    static func byKey(_ rows: [[String: any Sendable]]) -> [String: [String: any Sendable]] {
        Dictionary(rows.map { (($0["key"] as? String) ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
    }

    @Test("sales signed in USA and DEU and one seen only in a receipt give three rows by country; Get Transaction Info moves the receipt's sale from unknown to its country, and a replay gives the same")
    func byCountry() async throws {
        try await LedgerHarness.with { ledger in
            // StoreKit 2 transactions carry their storefront: the Apple ID's default, and Germany.
            let us = try await Self.orderAndBuy(ledger, user: "carol", product: "com.example.removeads")
            #expect(try await ledger.post("/v1/transactions", ["user_id": "carol", "signed_transaction": us.signedTransaction]).outcome == "delivered")
            let de = try await Self.orderAndBuy(ledger, user: "dieter", product: "com.example.removeads", storefront: "DEU")
            #expect(de.transaction.storefront == "DEU")
            #expect(try await ledger.post("/v1/transactions", ["user_id": "dieter", "signed_transaction": de.signedTransaction]).outcome == "delivered")
            // A receipt names no storefront, though Apple sold it in Great Britain.
            let gb = try await Self.orderAndBuy(ledger, user: "gwen", product: "com.example.coins100", storefront: "GBR")
            #expect(try await ledger.submit(user: "gwen", purchase: gb).outcome == "delivered")

            let delivered = try await ledger.events("PurchaseDelivered").compactMap { event -> PurchaseDelivered? in
                if case .purchaseDelivered(let d) = event { return d }
                return nil
            }
            let storefronts = Dictionary(delivered.map { ($0.transactionId, $0.storefront ?? "none") }, uniquingKeysWith: { first, _ in first })
            #expect(storefronts == [us.transactionId: "USA", de.transactionId: "DEU", gb.transactionId: "none"])

            let before = try await ledger.get("/v1/reports/revenue?\(Self.allTime)&group_by=country", token: LedgerHarness.financeToken)
            #expect(before.status == 200, "\(before.json)")
            let rows = Self.byKey((before.json["rows"] as? [[String: any Sendable]]) ?? [])
            #expect(Set(rows.keys) == ["USA", "DEU", "unknown"], "\(before.json)")
            #expect(rows.values.allSatisfy { $0["purchases"] as? Int == 1 })
            #expect(rows["unknown"]?["gross_minor"] as? Int == 99, "the receipt's sale at the catalog's price")
            // No price point is read yet: proceeds are the plan's estimate, and no tax is known.
            let totals = (before.json["totals"] as? [[String: any Sendable]]) ?? []
            for row in Array(rows.values) + totals {
                #expect(row["tax_minor"] as? Int == 0, "\(row)")
                #expect(row["proceeds_estimated"] as? Bool == true, "\(row)")
                let n = { (field: String) in (row[field] as? Int) ?? Int.min }
                #expect(n("net_minor") == n("tax_minor") + n("commission_minor") + n("proceeds_minor"), "\(row)")
            }

            // Each estimated sale is named, with why: no price point has been read at all.
            let estimated = try await ledger.server.reads.estimatedSales(try RevenueQuery(from: "2000-01-01", to: "2100-12-31"), limit: 2)
            #expect(estimated.count == 3 && estimated.sales.count == 2, "the count is all of them, the list up to the limit")
            #expect(estimated.sales.allSatisfy { $0.reason == "no price points read for the product" }, "\(estimated.sales)")

            // What the Get Transaction Info worker records for the receipt's sale: Apple's signed
            // transaction verbatim as a document, and the event, once.
            let jws = try ledger.simulator.signedTransaction(gb.transactionId)
            let document = DocumentStore.insert(Array(jws.utf8), kind: "apple_transaction_info")
            let info = TransactionInfoRecorded(
                transactionId: gb.transactionId, originalTransactionId: gb.transaction.originalTransactionId, environment: "Production",
                storefront: gb.transaction.storefront, priceMilliunits: gb.transaction.priceMilliunits, currency: gb.transaction.currency,
                documentSha256: document.name, recordedAtMs: ledger.server.service.clock(), source: "get-transaction-info")
            try await ledger.server.service.log.append(
                [LedgerAppend(stream: Streams.transactionInfo(gb.transactionId), expectation: .noStream, events: [.transactionInfoRecorded(info)])],
                metadata: RequestMetadata(actor: "test"), alongside: [document.statement])

            let after = try await ledger.get("/v1/reports/revenue?\(Self.allTime)&group_by=country", token: LedgerHarness.financeToken)
            let moved = Self.byKey((after.json["rows"] as? [[String: any Sendable]]) ?? [])
            #expect(Set(moved.keys) == ["USA", "DEU", "GBR"], "\(after.json)")
            #expect(moved["GBR"]?["gross_minor"] as? Int == Int(Money.fromMilliunits(gb.transaction.priceMilliunits, currency: gb.transaction.currency).minorUnits))
            #expect(moved["GBR"]?["currency"] as? String == "GBP", "Apple sold it in pounds; the catalog's dollars stood in until it said")

            // The CSV, as `audit revenue` and the console write it, ends with the new columns.
            let csv = try await ledger.server.reads.revenue(try RevenueQuery(from: "2000-01-01", to: "2100-12-31", groupBy: .country)).csv
            let lines = csv.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(lines.first == "country,currency,purchases,refunds,gross,refunded,net,commission,proceeds,tax,proceeds_estimated,bundle_id")
            #expect(lines.contains { $0.hasPrefix("GBR,GBP,1,0,") && $0.hasSuffix(",0.00,true,\(LedgerHarness.bundleId)") }, "\(lines)")

            // Timelines say where it was sold.
            let timeline = try await ledger.get("/v1/timelines/transactions/\(gb.transactionId)", token: LedgerHarness.supportToken)
            let summaries = ((timeline.json["entries"] as? [[String: any Sendable]]) ?? []).compactMap { $0["summary"] as? String }
            #expect(summaries.contains { $0.hasPrefix("Apple's Get Transaction Info") && $0.contains("sold in GBR") }, "\(summaries)")
            let german = try await ledger.get("/v1/timelines/transactions/\(de.transactionId)", token: LedgerHarness.supportToken)
            let germanSummaries = ((german.json["entries"] as? [[String: any Sendable]]) ?? []).compactMap { $0["summary"] as? String }
            #expect(germanSummaries.contains { $0.hasPrefix("Delivered") && $0.contains(" in DEU") }, "\(germanSummaries)")
            // And so does the console's look-up, in a country column.
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.supportToken)
            let lookup = try await browser.get("/console/lookup?q=\(gb.transactionId)")
            #expect(lookup.status == 200)
            #expect(lookup.body.contains("<th>country</th>"))
            #expect(lookup.body.contains("<td class=\"country\">GBR</td>"), "Get Transaction Info's row names the country")

            // A replay, a page of one event at a time or all in one, builds the same rows.
            var quiet = Logger(label: "tests.revenue-country")
            quiet.logLevel = .warning
            let single = try await ProjectionReplay(conninfo: ledger.conninfo, pageSize: 1, clock: ledger.server.service.clock, logger: quiet).run(dryRun: true)
            let whole = try await ProjectionReplay(conninfo: ledger.conninfo, pageSize: 10_000, clock: ledger.server.service.clock, logger: quiet).run(dryRun: true)
            #expect(single.changes.isEmpty, "\(single.changes)")
            #expect(whole.changes.isEmpty, "\(whole.changes)")
            for table in ["projection_revenue_lines", "projection_revenue_transaction_info"] {
                let checksums = [single, whole].map { report in report.checksums.first { $0.table == table } }
                #expect(checksums[0]?.md5 == checksums[1]?.md5, "\(table)")
                #expect((checksums[0]?.rows ?? 0) > 0, "\(table)")
            }
        }
    }

    @Test("group_by=country answers on an empty ledger, and an unknown grouping names country among the choices")
    func groupingNamed() async throws {
        try await LedgerHarness.with { ledger in
            let empty = try await ledger.get("/v1/reports/revenue?\(Self.allTime)&group_by=country", token: LedgerHarness.financeToken)
            #expect(empty.status == 200)
            let bad = try await ledger.get("/v1/reports/revenue?\(Self.allTime)&group_by=storefront", token: LedgerHarness.financeToken)
            #expect(bad.status == 400)
            #expect(((bad.json["error"] as? [String: any Sendable])?["message"] as? String)?.contains("day, month, product, country, offer or app") == true)
        }
    }
}
