import AppleSimulator
import Foundation
import Ledger
import LedgerProjections
import LedgerService
import Logging
import Testing

/// `GET /v1/reports/revenue` after real purchases, refunds and renewals.
@Suite("Revenue for finance")
struct RevenueFlowTests {
    static let allTime = "from=2000-01-01&to=2100-12-31"

    func report(_ ledger: LedgerHarness, _ query: String) async throws -> (rows: [[String: any Sendable]], totals: [[String: any Sendable]]) {
        let answer = try await ledger.get("/v1/reports/revenue?\(query)", token: LedgerHarness.financeToken)
        #expect(answer.status == 200, "\(answer.json)")
        return ((answer.json["rows"] as? [[String: any Sendable]]) ?? [], (answer.json["totals"] as? [[String: any Sendable]]) ?? [])
    }

    /// `user` buys `product` and has it delivered; Apple's clock moves `days` on, and the test
    /// waits (with a deadline) until the ledger has seen `renewals` renewals.
    func subscribe(_ ledger: LedgerHarness, user: String, product: String, thenAdvance days: Int, untilRenewals renewals: Int64) async throws {
        let (_, purchase) = try await ledger.orderAndBuy(user: user, product: product, appleId: "apple-\(user)")
        #expect(try await ledger.submit(user: user, purchase: purchase).outcome == "delivered")
        _ = try await ledger.simulator.advance(days: days)
        try await ledger.eventually("\(renewals) renewals are seen") { try await ledger.count("SubscriptionRenewalSeen") >= renewals }
    }

    /// Every row keeps gross − refunded = net and net − tax − commission = proceeds, and the rows
    /// of each currency add up to its total. No price point is read yet: tax is 0 and every
    /// row's proceeds are estimated.
    func expectConsistent(_ rows: [[String: any Sendable]], _ totals: [[String: any Sendable]]) {
        let fields = ["purchases", "refunds", "gross_minor", "refunded_minor", "net_minor", "tax_minor", "commission_minor", "proceeds_minor"]
        for row in rows + totals {
            let n = { (field: String) in (row[field] as? Int) ?? Int.min }
            #expect(n("gross_minor") - n("refunded_minor") == n("net_minor"), "\(row)")
            #expect(n("net_minor") - n("tax_minor") - n("commission_minor") == n("proceeds_minor"), "\(row)")
            #expect(n("tax_minor") == 0, "\(row)")
            #expect(row["proceeds_estimated"] as? Bool == true, "\(row)")
        }
        for total in totals {
            let currency = total["currency"] as? String
            #expect(total["key"] == nil, "a total has no key")
            for field in fields {
                let sum = rows.filter { $0["currency"] as? String == currency }.compactMap { $0[field] as? Int }.reduce(0, +)
                #expect(sum == total[field] as? Int, "\(field) of \(currency ?? "?")")
            }
        }
    }

    @Test("sales at the catalog's or Apple's price, a refund netted, sandbox apart; rows add up to totals")
    func revenueByProduct() async throws {
        try await LedgerHarness.with { ledger in
            for user in ["alice", "bob"] {
                let (_, coins) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-\(user)")
                #expect(try await ledger.submit(user: user, purchase: coins).outcome == "delivered")
                if user == "bob" {
                    _ = try await ledger.simulator.refund(transactionId: coins.transactionId)
                    try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
                }
            }
            // StoreKit 2 carries Apple's own price.
            let (_, removeAds) = try await ledger.orderAndBuy(user: "carol", product: "com.example.removeads", appleId: "apple-carol")
            #expect(try await ledger.post("/v1/transactions", ["user_id": "carol", "signed_transaction": removeAds.signedTransaction]).outcome == "delivered")
            let applePrice = Money.fromMilliunits(removeAds.transaction.priceMilliunits, currency: removeAds.transaction.currency)
            // A sandbox purchase is never revenue.
            let (_, sandbox) = try await ledger.orderAndBuy(user: "dave", product: "com.example.coins100", appleId: "apple-dave", environment: "Sandbox")
            #expect(try await ledger.submit(user: "dave", purchase: sandbox).outcome == "delivered")

            let (rows, totals) = try await report(ledger, "\(Self.allTime)&group_by=product")
            #expect(rows.map { $0["key"] as? String } == ["com.example.coins100", "com.example.removeads"])
            let coins = rows[0]
            #expect(coins["currency"] as? String == "USD")
            #expect(coins["purchases"] as? Int == 2)
            #expect(coins["refunds"] as? Int == 1)
            #expect(coins["gross_minor"] as? Int == 198)
            #expect(coins["refunded_minor"] as? Int == 99)
            #expect(coins["net_minor"] as? Int == 99)
            // 30% of 0.99 is 0.297, rounded to 0.30 on each line; the refund returns its own.
            #expect(coins["commission_minor"] as? Int == 30)
            #expect(rows[1]["gross_minor"] as? Int == Int(applePrice.minorUnits))
            #expect(rows[1]["commission_minor"] as? Int == Int(CommissionPlan.standard.commission(onMinor: applePrice.minorUnits, reducedRate: false)))
            #expect(totals.count == 1)
            expectConsistent(rows, totals)

            let byDay = try await report(ledger, "\(Self.allTime)&group_by=day")
            #expect(byDay.rows.allSatisfy { ($0["key"] as? String)?.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil })
            #expect(byDay.totals.first?["net_minor"] as? Int == totals.first?["net_minor"] as? Int)
            expectConsistent(byDay.rows, byDay.totals)

            let sandboxReport = try await report(ledger, "\(Self.allTime)&group_by=product&environment=Sandbox")
            #expect(sandboxReport.rows.count == 1)
            #expect(sandboxReport.rows.first?["purchases"] as? Int == 1)
            // A period with nothing in it.
            let empty = try await report(ledger, "from=2001-01-01&to=2001-01-31")
            #expect(empty.rows.isEmpty && empty.totals.isEmpty)
        }
    }

    @Test("a yearly subscription pays 30% in its first year of paid service and 15% from its second")
    func secondYearCommission() async throws {
        try await LedgerHarness.with { ledger in
            try await subscribe(ledger, user: "erin", product: "com.example.pro.yearly", thenAdvance: 366, untilRenewals: 1)
            let (rows, totals) = try await report(ledger, "\(Self.allTime)&group_by=month")
            #expect(rows.count == 2, "\(rows)")
            #expect(rows.map { $0["gross_minor"] as? Int } == [4999, 4999])
            #expect(rows.map { $0["commission_minor"] as? Int } == [1500, 750])
            expectConsistent(rows, totals)
        }
    }

    @Test("a subscriber back 30 days after their year ran out keeps the 15% rate; back after 90 days, they pay 30% again")
    func lapseResetsYear() async throws {
        try await LedgerHarness.with { ledger in
            var originals: [String] = []
            for user in ["gus", "hal"] {
                let (_, purchase) = try await ledger.orderAndBuy(user: user, product: "com.example.pro.yearly", appleId: "apple-\(user)")
                #expect(try await ledger.submit(user: user, purchase: purchase).outcome == "delivered")
                originals.append(purchase.transaction.originalTransactionId)
            }
            _ = try await ledger.simulator.advance(days: 366)
            try await ledger.eventually("both renewals are seen") { try await ledger.count("SubscriptionRenewalSeen") >= 2 }
            for original in originals { try await ledger.simulator.setAutoRenew(originalTransactionId: original, enabled: false) }
            // The second year ends on day 730. Hal comes back on day 760, Gus on day 820.
            for (user, days) in [("hal", 394), ("gus", 60)] {
                _ = try await ledger.simulator.advance(days: days)
                let (_, again) = try await ledger.orderAndBuy(user: user, product: "com.example.pro.yearly", appleId: "apple-\(user)")
                // Apple's SUBSCRIBED notification may deliver it before the app posts the receipt.
                let answer = try await ledger.submit(user: user, purchase: again)
                #expect(["delivered", "already_delivered"].contains(answer.outcome), "\(answer.status) \(answer.json)")
                #expect(answer.deliveries.first?["transaction_id"] as? String == again.transactionId)
            }
            try await ledger.eventually("both returns are sales") { try await report(ledger, "\(Self.allTime)&group_by=day").rows.count == 4 }
            let (rows, totals) = try await report(ledger, "\(Self.allTime)&group_by=day")
            // Day 0: two first years at 30%; day 365: two second years at 15%; then Hal at 15%
            // and Gus at 30%.
            #expect(rows.map { $0["purchases"] as? Int } == [2, 2, 1, 1], "\(rows)")
            #expect(rows.map { $0["commission_minor"] as? Int } == [3000, 1500, 750, 1500])
            expectConsistent(rows, totals)
        }
    }

    @Test("a monthly subscription's thirteen renewals give the same revenue lines applied a page of one event at a time or all in one page")
    func pagingKeepsLines() async throws {
        try await LedgerHarness.with { ledger in
            try await subscribe(ledger, user: "fay", product: "com.example.pro.monthly", thenAdvance: 400, untilRenewals: 13)
            var quiet = Logger(label: "tests.revenue")
            quiet.logLevel = .warning
            // One event per page writes each sale on its own; one page writes them as one statement.
            let single = try await ProjectionReplay(conninfo: ledger.conninfo, pageSize: 1, clock: ledger.server.service.clock, logger: quiet).run(dryRun: true)
            let whole = try await ProjectionReplay(conninfo: ledger.conninfo, pageSize: 10_000, clock: ledger.server.service.clock, logger: quiet).run(dryRun: true)
            let lines = { (report: ReplayReport) in report.checksums.first { $0.table == "projection_revenue_lines" } }
            // The thirteen paid renewals at least (the first month may be a free trial, not a sale).
            #expect((lines(single)?.rows ?? 0) >= 13)
            #expect(lines(single)?.md5 == lines(whole)?.md5)
            #expect(single.changes.isEmpty, "\(single.changes)")
            #expect(whole.changes.isEmpty, "\(whole.changes)")
            // From the thirteenth month on, a year of paid service lies behind each sale.
            let reduced: Int64? = try await ledger.pool.withConnection {
                try $0.query("SELECT count(*) FROM projection_revenue_lines WHERE reduced_rate").scalar(Int64.self)
            }
            #expect(reduced.map { (1...2).contains($0) } == true, "\(String(describing: reduced)) reduced-rate lines")
        }
    }

    @Test("bad parameters are 400 invalid_request, the app token 403, and nothing is appended")
    func badParameters() async throws {
        try await LedgerHarness.with { ledger in
            let before = try await ledger.count("CatalogLoaded")
            for query in ["from=2026-02-30&to=2026-03-01", "from=2026-01-01", "from=2026-01-01&to=2026-01-31&group_by=week",
                          "from=2026-02-01&to=2026-01-31", "from=2026-01-01&to=2026-01-31&environment=Test", "from=20260101&to=2026-01-31",
                          "from=0000-01-01&to=2026-01-31"] {
                let answer = try await ledger.get("/v1/reports/revenue?\(query)", token: LedgerHarness.financeToken)
                #expect(answer.status == 400, "\(query): \(answer.status)")
                #expect(answer.errorCode == "invalid_request", "\(query)")
            }
            let app = try await ledger.get("/v1/reports/revenue?from=2026-01-01&to=2026-01-31")
            #expect(app.status == 403)
            #expect(try await ledger.count("CatalogLoaded") == before)
        }
    }
}
