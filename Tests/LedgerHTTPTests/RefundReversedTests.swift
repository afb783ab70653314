import Foundation
import Ledger
import Testing

/// REFUND_REVERSED: a reversed refund gives back the grant, the entitlement and the revenue,
/// the revenue in the period of the reversal.
@Suite("Refunds Apple reverses")
struct RefundReversedTests {
    static func coins(_ ledger: LedgerHarness, _ user: String) async throws -> Int? {
        let answer = try await ledger.get("/v1/users/\(user)")
        return (answer.json["balances"] as? [String: any Sendable])?["coins"] as? Int
    }

    static func totals(_ ledger: LedgerHarness) async throws -> [String: any Sendable] {
        let report = try await ledger.get("/v1/reports/revenue?from=2000-01-01&to=2100-12-31", token: LedgerHarness.financeToken)
        return (report.json["totals"] as? [[String: any Sendable]])?.first ?? [:]
    }

    @Test("a reversed refund of coins credits them again and counts the sale again, once however often Apple repeats it")
    func consumable() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-rev", product: "com.example.coins100", appleId: "apple-rev")
            #expect(try await ledger.submit(user: "u-rev", purchase: purchase).outcome == "delivered")
            _ = try await ledger.simulator.refund(transactionId: purchase.transactionId, reason: 0)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            #expect(try await Self.coins(ledger, "u-rev") == 0)
            let refunded = try await Self.totals(ledger)
            #expect(refunded["net_minor"] as? Int == 0)

            _ = try await ledger.simulator.reverseRefund(transactionId: purchase.transactionId)
            try await ledger.eventually("the reversal is recorded") { try await ledger.count("RefundReversed") == 1 }
            #expect(try await Self.coins(ledger, "u-rev") == 100)
            let reversed = try await Self.totals(ledger)
            #expect(reversed["refunds"] as? Int == 0, "\(reversed)")
            #expect(reversed["net_minor"] as? Int == reversed["gross_minor"] as? Int)
            #expect((reversed["gross_minor"] as? Int ?? 0) > 0)
            // Apple repeats the notification: recorded once, reversed once.
            let sent = try #require(ledger.simulator.sentNotifications.last { $0.notificationType == "REFUND_REVERSED" })
            let again = try await ledger.request(.POST, "/v1/notifications/apple", body: sent.body, token: nil)
            #expect(again.json["status"] as? String == "duplicate")
            #expect(try await ledger.count("RefundReversed") == 1)
            #expect(try await Self.coins(ledger, "u-rev") == 100)
        }
    }

    @Test("a reversed refund of a non-consumable gives the entitlement back")
    func nonConsumable() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-rev2", product: "com.example.removeads", appleId: "apple-rev2")
            #expect(try await ledger.submit(user: "u-rev2", purchase: purchase).outcome == "delivered")
            func active() async throws -> Bool? {
                let user = try await ledger.get("/v1/users/u-rev2")
                return (user.json["entitlements"] as? [[String: any Sendable]])?.first?["active"] as? Bool
            }
            #expect(try await active() == true)
            _ = try await ledger.simulator.refund(transactionId: purchase.transactionId, reason: 1)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            #expect(try await active() == false)
            _ = try await ledger.simulator.reverseRefund(transactionId: purchase.transactionId)
            try await ledger.eventually("the reversal is recorded") { try await ledger.count("RefundReversed") == 1 }
            #expect(try await active() == true)
        }
    }
}
