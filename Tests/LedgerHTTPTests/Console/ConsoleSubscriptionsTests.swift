import Foundation
import Ledger
import Testing

/// The subscriptions page's figures, from subscriptions lived through on the simulator: a trial
/// that turns paid, a yearly plan, one that lapses and comes back; each figure's list names the
/// subscriptions behind it.
@Suite struct ConsoleSubscriptionsTests {
    @Test func figuresFollowTheSubscriptionsLife() async throws {
        try await LedgerHarness.with { ledger in
            let (_, yearly) = try await ledger.orderAndBuy(user: "sub-u1", product: "com.example.pro.yearly", appleId: "apple-sub-1")
            #expect(try await ledger.submit(user: "sub-u1", purchase: yearly).status == 200)
            let (_, monthly) = try await ledger.orderAndBuy(user: "sub-u2", product: "com.example.pro.monthly", appleId: "apple-sub-2")
            #expect(try await ledger.submit(user: "sub-u2", purchase: monthly).status == 200)
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)

            func figure(_ id: String, in page: String) -> String? {
                guard let start = page.range(of: "id=\"figure-\(id)\"") else { return nil }
                let rest = page[start.upperBound...]
                guard let value = rest.range(of: "<div class=\"value\">") else { return nil }
                return rest[value.upperBound...].prefix { $0 != "<" }.description
            }
            // Day 0: the yearly plan pays (49.99 a year: 4.17 a month); the monthly one is a trial.
            var page = try await browser.get("/console/subscriptions").body
            #expect(figure("active", in: page) == "2")
            #expect(figure("trials", in: page) == "1")
            #expect(figure("paying", in: page) == "1")
            #expect(page.contains("MRR, USD</div><div class=\"value\">4.17<"), "\(page)")

            // Day 10: the trial turned into a paid month (renewal notification posted to the ledger).
            _ = try await ledger.simulator.advance(days: 10)
            try await ledger.eventually("the monthly renewal is recorded") { try await ledger.count("SubscriptionRenewalSeen") >= 1 }
            page = try await browser.get("/console/subscriptions").body
            #expect(figure("paying", in: page) == "2")
            #expect(page.contains("MRR, USD</div><div class=\"value\">9.16<"), "4.17 + 4.99: \(page)")

            // The subscriber turns auto-renew off and the month runs out: churned that month.
            try await ledger.simulator.setAutoRenew(originalTransactionId: monthly.transaction.originalTransactionId, enabled: false)
            _ = try await ledger.simulator.advance(days: 35)
            try await ledger.eventually("the expiry is seen") {
                let p = try await browser.get("/console/subscriptions").body
                return figure("active", in: p) == "1"
            }
            page = try await browser.get("/console/subscriptions").body
            let churnMonth = try #require(page.range(of: "list=churned&amp;month=").map { String(page[$0.upperBound...].prefix(7)) })
            let churned = try await browser.get("/console/subscriptions?environment=Production&list=churned&month=\(churnMonth)").body
            #expect(churned.contains(monthly.transaction.originalTransactionId))
            #expect(!churned.contains(yearly.transaction.originalTransactionId))

            // Back again: the same original transaction, reactivated this month.
            let (_, again) = try await ledger.orderAndBuy(user: "sub-u2", product: "com.example.pro.monthly", appleId: "apple-sub-2")
            #expect(again.transaction.originalTransactionId == monthly.transaction.originalTransactionId)
            #expect(try await ledger.submit(user: "sub-u2", purchase: again).status == 200)
            page = try await browser.get("/console/subscriptions").body
            #expect(figure("active", in: page) == "2")
            let month = String(RevenueDay.of(ledger.simulator.nowMilliseconds).prefix(7))
            let reactivated = try await browser.get("/console/subscriptions?environment=Production&list=reactivated&month=\(month)").body
            #expect(reactivated.contains("Reactivated in \(month) (1)"), "\(reactivated)")
            #expect(reactivated.contains(monthly.transaction.originalTransactionId))
        }
    }
}
