import Foundation
import Ledger
import Testing

/// docs/http-api.md `POST /v1/users/{user_id}/spend` and `/consent`, and the `support` scope.
@Suite("Spending a balance")
struct SpendingFlowTests {
    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// Delivers one pack of 100 coins to `user`.
    static func buyCoins(_ ledger: LedgerHarness, user: String, appleId: String) async throws -> String {
        let (_, purchase) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: appleId)
        #expect(try await ledger.submit(user: user, purchase: purchase).outcome == "delivered")
        return purchase.transactionId
    }

    @Test("a spend answers the new balance; the same spend_id again answers the first; other content and overspending are 409")
    func spend() async throws {
        try await LedgerHarness.with { ledger in
            _ = try await Self.buyCoins(ledger, user: "u-spend", appleId: "apple-spend")
            let body = try Self.json(["unit": "coins", "amount": 30, "spend_id": "s-1", "reason": "a hint"])
            let first = try await ledger.request(.POST, "/v1/users/u-spend/spend", body: body)
            #expect(first.status == 200)
            #expect(first.json["balance"] as? Int == 70)
            #expect(first.json["spend_id"] as? String == "s-1")
            let again = try await ledger.request(.POST, "/v1/users/u-spend/spend", body: body)
            #expect(again.status == 200)
            #expect(again.json["balance"] as? Int == 70, "the first result, not a second spend")
            let other = try await ledger.request(
                .POST, "/v1/users/u-spend/spend", body: try Self.json(["unit": "coins", "amount": 31, "spend_id": "s-1"]))
            #expect(other.status == 409)
            #expect(other.errorCode == "idempotency_conflict")
            let over = try await ledger.request(
                .POST, "/v1/users/u-spend/spend", body: try Self.json(["unit": "coins", "amount": 71, "spend_id": "s-2"]))
            #expect(over.status == 409)
            #expect(over.errorCode == "insufficient_balance")
            let user = try await ledger.get("/v1/users/u-spend")
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 70)
            #expect(try await ledger.count("BalanceSpent") == 1)
            let bad = try await ledger.request(.POST, "/v1/users/u-spend/spend", body: try Self.json(["unit": "coins", "amount": 0, "spend_id": "s-3"]))
            #expect(bad.status == 400)
        }
    }

    @Test("64 concurrent spends of 10 from a balance of 100: exactly 10 succeed, 54 are insufficient_balance, the balance is 0")
    func concurrentSpends() async throws {
        try await LedgerHarness.with { ledger in
            let transaction = try await Self.buyCoins(ledger, user: "u-race", appleId: "apple-race")
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<64 {
                    group.addTask {
                        // The 64 take turns on the one wallet, so the last waits for all the others:
                        // a full CI run on two cores once took more than 60 s for them. This test
                        // is about who wins, not how fast.
                        let answer = try await ledger.request(
                            .POST, "/v1/users/u-race/spend", body: try Self.json(["unit": "coins", "amount": 10, "spend_id": "race-\(index)"]),
                            timeout: .seconds(300))
                        return (answer.status, answer.errorCode)
                    }
                }
                var all: [(Int, String?)] = []
                for try await status in group { all.append(status) }
                return all
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 10, "\(statuses)")
            #expect(statuses.filter { $0.1 == "insufficient_balance" }.count == 54)
            let spends = try await ledger.events("BalanceSpent").compactMap { if case .balanceSpent(let s) = $0 { s } else { nil } }
            #expect(spends.count == 10)
            #expect(spends.map(\.balanceAfter).sorted() == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90])
            #expect(spends.allSatisfy { $0.attributions == [SpendAttribution(transactionId: transaction, amount: 10)] })
            let user = try await ledger.get("/v1/users/u-race")
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 0)
        }
    }

    @Test("the user's timeline shows the spend and the purchase it used; support may read it but not revenue; consent is recorded")
    func timelineSupportAndConsent() async throws {
        try await LedgerHarness.with { ledger in
            let transaction = try await Self.buyCoins(ledger, user: "u-tl", appleId: "apple-tl")
            let spent = try await ledger.request(
                .POST, "/v1/users/u-tl/spend", body: try Self.json(["unit": "coins", "amount": 40, "spend_id": "tl-1"]))
            #expect(spent.status == 200)
            let timeline = try await ledger.get("/v1/timelines/transactions/\(transaction)", token: LedgerHarness.supportToken)
            #expect(timeline.status == 200)
            let types = (timeline.json["entries"] as? [[String: any Sendable]] ?? []).compactMap { $0["type"] as? String }
            #expect(types.contains("BalanceSpent"), "\(types)")
            let revenue = try await ledger.get("/v1/reports/revenue?from=2026-01-01&to=2026-12-31", token: LedgerHarness.supportToken)
            #expect(revenue.status == 403)
            let user = try await ledger.get("/v1/users/u-tl", token: LedgerHarness.supportToken)
            #expect(user.status == 200)
            let spendAsSupport = try await ledger.request(
                .POST, "/v1/users/u-tl/spend", body: try Self.json(["unit": "coins", "amount": 1, "spend_id": "tl-2"]), token: LedgerHarness.supportToken)
            #expect(spendAsSupport.status == 403)

            let consent = try await ledger.request(.POST, "/v1/users/u-tl/consent", body: try Self.json(["consumption_data": true]))
            #expect(consent.status == 200)
            #expect(consent.json["consumption_data"] as? Bool == true)
            let uTl = try await ledger.recorded("u-tl")
            #expect(try await ledger.server.service.reads.consent(userId: uTl, in: try await ledger.server.service.reads.streams(of: LedgerHarness.bundleId))?.consumptionData == true)
        }
    }
}
