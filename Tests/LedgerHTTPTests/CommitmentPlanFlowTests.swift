import AppleSimulator
import Foundation
import Ledger
import Testing

/// A 12-month commitment billed monthly (`com.example.pro.committed`: 4.99 USD an instalment,
/// 59.88 the commitment), lived through on the simulator over real HTTP and a real PostgreSQL:
/// the purchase posted signed, two monthly renewals posted by the simulator as notifications.
/// Revenue books three instalments of 4.99 (never the commitment's price), MRR counts the
/// instalment, and the subscriptions page says where the commitment stands.
@Suite("Commitment plans through the ledger")
struct CommitmentPlanFlowTests {
    static let product = "com.example.pro.committed"

    @Test("three instalments: three sales of 4.99, MRR 4.99, and the page shows 3 of 12 with 44.91 still to come")
    func threeInstalments() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "cleo", product: Self.product, appleId: "apple-cleo")
            let commitment = try #require(purchase.transaction.commitment)
            #expect(commitment.billingPeriodNumber == 1 && commitment.totalBillingPeriods == 12)
            let answer = try await ledger.post("/v1/transactions", ["user_id": "cleo", "signed_transaction": purchase.signedTransaction])
            #expect(answer.outcome == "delivered", "\(answer.status) \(answer.json)")

            // Two months on: Apple renews twice and says so in DID_RENEW notifications. (Two
            // calendar months are 59 to 62 days; the third renewal is 89 days or more away.)
            _ = try await ledger.simulator.advance(days: 62)
            try await ledger.eventually("both instalments are seen") { try await ledger.count("SubscriptionRenewalSeen") == 2 }
            let renewals = try await ledger.events("SubscriptionRenewalSeen").compactMap { event -> SubscriptionRenewalSeen? in
                if case .subscriptionRenewalSeen(let renewal) = event { return renewal }
                return nil
            }
            #expect(renewals.compactMap(\.commitment?.periodNumber).sorted() == [2, 3])
            #expect(renewals.allSatisfy { $0.billingPlanType == "MONTHLY" && $0.priceMilliunits == 4990 })

            // Revenue: three instalment sales of 4.99, each on its own day; 59.88 is no sale.
            let byProduct = try await ledger.get(
                "/v1/reports/revenue?from=2000-01-01&to=2100-12-31&group_by=product", token: LedgerHarness.financeToken)
            #expect(byProduct.status == 200)
            let rows = (byProduct.json["rows"] as? [[String: any Sendable]]) ?? []
            let committed = try #require(rows.first { $0["key"] as? String == Self.product }, "\(rows)")
            #expect(committed["purchases"] as? Int == 3)
            #expect(committed["gross_minor"] as? Int == 3 * 499)
            #expect(committed["currency"] as? String == "USD")
            let byDay = try await ledger.get(
                "/v1/reports/revenue?from=2000-01-01&to=2100-12-31&group_by=day", token: LedgerHarness.financeToken)
            let days = (byDay.json["rows"] as? [[String: any Sendable]]) ?? []
            #expect(days.map { $0["gross_minor"] as? Int } == [499, 499, 499], "\(days)")

            // The subscriptions page: MRR is the instalment; the commitment stands at 3 of 12,
            // 9 × 4.99 still to come.
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            let page = try await browser.get("/console/subscriptions").body
            #expect(page.contains("MRR, USD</div><div class=\"value\">4.99<"), "\(page)")
            #expect(page.contains("Committed, still to come, USD</div><div class=\"value\">44.91<"), "\(page)")
            let table = try #require(page.range(of: "id=\"commitment-list\"").map { String(page[$0.upperBound...]) })
            #expect(table.contains(purchase.transaction.originalTransactionId))
            #expect(table.contains("<td>3 of 12</td>"))
            #expect(table.contains("4.99 USD") && table.contains("59.88 USD") && table.contains("44.91 USD"))
            #expect(table.contains(RevenueDay.iso8601(commitment.commitmentExpiresDateMs)), "the commitment's end")
            // The figure's list names it too.
            let list = try await browser.get("/console/subscriptions?environment=Production&list=committed").body
            #expect(list.contains(purchase.transaction.originalTransactionId) && list.contains("3 of 12"))
        }
    }
}
