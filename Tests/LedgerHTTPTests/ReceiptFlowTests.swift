import AppleSimulator
import Foundation
import Ledger
import Testing

@Suite("POST /v1/receipts over the real server, the simulator answering over HTTP")
struct ReceiptFlowTests {
    @Test("a consumable bought against an order is delivered once, credited, and read back at once")
    func deliversConsumable() async throws {
        try await LedgerHarness.with { ledger in
            let (order, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let answer = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(answer.status == 200)
            #expect(answer.outcome == "delivered")
            let delivery = try #require(answer.deliveries.first)
            #expect(delivery["transaction_id"] as? String == purchase.transactionId)
            #expect(delivery["order_id"] as? String == order["order_id"] as? String)
            #expect(delivery["environment"] as? String == "Production")
            #expect(answer.header("X-Request-ID") != nil)
            // Read-your-writes: the very next read shows the credit.
            let user = try await ledger.get("/v1/users/u1")
            #expect(user.status == 200)
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
            // The match was recorded with its reason.
            let delivered = try await ledger.events("PurchaseDelivered")
            guard case .purchaseDelivered(let d)? = delivered.first else { Issue.record("no delivery event"); return }
            #expect(d.match == .appAccountToken)
        }
    }

    @Test("a resubmission answers already_delivered with the original deliveries, and appends no second delivery")
    func resubmission() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let first = try await ledger.submit(user: "u1", purchase: purchase)
            let second = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(first.outcome == "delivered")
            #expect(second.status == 200)
            #expect(second.outcome == "already_delivered")
            #expect(second.deliveries.first?["transaction_id"] as? String == purchase.transactionId)
            #expect(try await ledger.count("PurchaseDelivered") == 1)
            let user = try await ledger.get("/v1/users/u1")
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
        }
    }

    @Test("64 concurrent submissions of one receipt deliver exactly once; the rest answer already_delivered with the same delivery")
    func concurrentSubmissions() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let answers = try await withThrowingTaskGroup(of: LedgerHarness.Answer.self) { group in
                // The 64 take turns on one transaction, so the last waits for all the others: a
                // full CI run on two cores passed 60 s. This test is about exactly once, not speed.
                for _ in 0..<64 { group.addTask { try await ledger.submit(user: "u1", purchase: purchase, timeout: .seconds(300)) } }
                var all: [LedgerHarness.Answer] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.allSatisfy { $0.status == 200 })
            #expect(answers.filter { $0.outcome == "delivered" }.count == 1)
            #expect(answers.filter { $0.outcome == "already_delivered" }.count == 63)
            #expect(answers.allSatisfy { $0.deliveries.map { $0["transaction_id"] as? String } == [purchase.transactionId] })
            #expect(try await ledger.count("PurchaseDelivered") == 1)
            let user = try await ledger.get("/v1/users/u1")
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
        }
    }

    @Test("a transaction id that is not in the receipt is rejected transaction_not_in_receipt")
    func transactionNotInReceipt() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let answer = try await ledger.post("/v1/receipts", ["user_id": "u1", "receipt_data": purchase.receiptData, "transaction_id": "999999"])
            #expect(answer.status == 422)
            #expect(answer.outcome == "rejected")
            #expect(answer.errorCode == "transaction_not_in_receipt")
            #expect(try await ledger.count("PurchaseDelivered") == 0)
            #expect(try await ledger.count("DeliveryRejected") == 1)
        }
    }

    @Test("a receipt of another app is rejected bundle_id_mismatch")
    func bundleMismatch() async throws {
        try await LedgerHarness.with { ledger in
            let purchase = try await ledger.simulator.purchase(
                appleId: "apple-1", productId: "com.example.coins100", environment: .production, bundleId: "com.other.app")
            let answer = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(answer.status == 422)
            #expect(answer.errorCode == "bundle_id_mismatch")
        }
    }

    @Test("a sandbox receipt is followed from production to sandbox and delivered as Sandbox")
    func sandbox() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1", environment: "Sandbox")
            let answer = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(answer.outcome == "delivered")
            #expect(answer.deliveries.first?["environment"] as? String == "Sandbox")
            let responded = try await ledger.events("AppleResponded")
            #expect(responded.count == 2)
            if case .appleResponded(let first)? = responded.first { #expect(first.status == 21007) }
        }
    }

    @Test("a non-consumable held by user A, submitted by user B: owned_by_another_user under keep")
    func keepPolicy() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "alice", product: "com.example.removeads", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: purchase).outcome == "delivered")
            let bob = try await ledger.submit(user: "bob", purchase: purchase)
            #expect(bob.status == 422)
            #expect(bob.errorCode == "owned_by_another_user")
            let alice = try await ledger.get("/v1/users/alice")
            #expect((alice.json["entitlements"] as? [[String: any Sendable]])?.first?["product_id"] as? String == "com.example.removeads")
        }
    }

    @Test("under transfer, ownership moves to user B and is recorded as an event")
    func transferPolicy() async throws {
        try await LedgerHarness.with(policy: .transfer) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "alice", product: "com.example.removeads", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: purchase).outcome == "delivered")
            let bob = try await ledger.submit(user: "bob", purchase: purchase)
            #expect(bob.status == 200)
            #expect(bob.deliveries.first?["user_id"] as? String == "bob")
            #expect(try await ledger.count("OwnershipTransferred") == 1)
            let alice = try await ledger.get("/v1/users/alice")
            #expect((alice.json["entitlements"] as? [[String: any Sendable]])?.isEmpty == true)
            let bobView = try await ledger.get("/v1/users/bob")
            #expect((bobView.json["entitlements"] as? [[String: any Sendable]])?.count == 1)
        }
    }

    @Test("a consumable delivered to user A, submitted by user B: owned_by_another_user whatever the policy")
    func consumableOtherUser() async throws {
        try await LedgerHarness.with(policy: .transfer) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "alice", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: purchase).outcome == "delivered")
            let bob = try await ledger.submit(user: "bob", purchase: purchase)
            #expect(bob.status == 422)
            #expect(bob.errorCode == "owned_by_another_user")
        }
    }
}
