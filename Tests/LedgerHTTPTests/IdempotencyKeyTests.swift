import Foundation
import Ledger
import Testing

/// docs/http-api.md: every POST that creates something accepts an `Idempotency-Key`: the same key
/// again answers the first result; with other content, 409 `idempotency_conflict`.
@Suite("Idempotency-Key")
struct IdempotencyKeyTests {
    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    @Test("an order posted twice with one key is created once and answered the same; other content is 409")
    func orders() async throws {
        try await LedgerHarness.with { ledger in
            let body = try Self.json(["user_id": "u-idem", "product_id": "com.example.coins100"])
            let key = [("Idempotency-Key", "order-retry-1")]
            let first = try await ledger.request(.POST, "/v1/orders", body: body, headers: key)
            let again = try await ledger.request(.POST, "/v1/orders", body: body, headers: key)
            #expect(first.status == 201)
            #expect(again.status == 201)
            #expect(first.json["order_id"] as? String != nil)
            #expect(again.json["order_id"] as? String == first.json["order_id"] as? String)
            #expect(again.json["app_account_token"] as? String == first.json["app_account_token"] as? String)
            #expect(try await ledger.events("OrderCreated").count == 1)

            let other = try await ledger.request(
                .POST, "/v1/orders", body: try Self.json(["user_id": "u-idem", "product_id": "com.example.removeads"]), headers: key)
            #expect(other.status == 409)
            #expect(other.errorCode == "idempotency_conflict")

            let fresh = try await ledger.request(.POST, "/v1/orders", body: body, headers: [("Idempotency-Key", "order-retry-2")])
            #expect(fresh.status == 201)
            #expect(fresh.json["order_id"] as? String != first.json["order_id"] as? String)
            let unkeyed = try await ledger.request(.POST, "/v1/orders", body: body)
            #expect(unkeyed.status == 201)
            #expect(try await ledger.events("OrderCreated").count == 3)

            let bad = try await ledger.request(.POST, "/v1/orders", body: body, headers: [("Idempotency-Key", String(repeating: "k", count: 300))])
            #expect(bad.status == 400)
            #expect(bad.errorCode == "invalid_request")
        }
    }

    @Test("eight concurrent orders with one key create one order, and all eight hear it")
    func concurrentOrders() async throws {
        try await LedgerHarness.with { ledger in
            let body = try Self.json(["user_id": "u-race", "product_id": "com.example.coins100"])
            let ids = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let answer = try await ledger.request(.POST, "/v1/orders", body: body, headers: [("Idempotency-Key", "race-1")])
                        return answer.status == 201 ? answer.json["order_id"] as? String : "status \(answer.status) \(answer.json)"
                    }
                }
                var ids: [String?] = []
                for try await id in group { ids.append(id) }
                return ids
            }
            #expect(Set(ids).count == 1, "\(ids)")
            #expect(try await ledger.events("OrderCreated").count == 1)
        }
    }

    @Test("a receipt posted again with its key answers the first result (delivered), not already_delivered; other content is 409")
    func receipts() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-idem-r", product: "com.example.coins100", appleId: "apple-idem-r")
            let body = try Self.json(["user_id": "u-idem-r", "receipt_data": purchase.receiptData, "transaction_id": purchase.transactionId])
            let key = [("Idempotency-Key", "receipt-1")]
            let first = try await ledger.request(.POST, "/v1/receipts", body: body, headers: key)
            let again = try await ledger.request(.POST, "/v1/receipts", body: body, headers: key)
            #expect(first.outcome == "delivered")
            #expect(again.outcome == "delivered")
            #expect(again.deliveries.map { $0["transaction_id"] as? String } == [purchase.transactionId])
            #expect(try await ledger.events("ReceiptSubmitted").count == 1, "the retry records nothing")
            let unkeyed = try await ledger.request(.POST, "/v1/receipts", body: body)
            #expect(unkeyed.outcome == "already_delivered")

            let other = try await ledger.request(
                .POST, "/v1/receipts", body: try Self.json(["user_id": "someone-else", "receipt_data": purchase.receiptData]), headers: key)
            #expect(other.status == 409)
            #expect(other.errorCode == "idempotency_conflict")
        }
    }

    @Test("one key on two routes, or from two tokens, names two requests")
    func scoped() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-scope", product: "com.example.removeads", appleId: "apple-scope")
            let key = [("Idempotency-Key", "shared-key")]
            let order = try await ledger.request(
                .POST, "/v1/orders", body: try Self.json(["user_id": "u-scope", "product_id": "com.example.coins100"]), headers: key)
            #expect(order.status == 201)
            let signed = try await ledger.request(
                .POST, "/v1/transactions", body: try Self.json(["user_id": "u-scope", "signed_transaction": purchase.signedTransaction]),
                headers: key)
            #expect(signed.outcome == "delivered", "\(signed.json)")
            let replayed = try await ledger.request(
                .POST, "/v1/transactions", body: try Self.json(["user_id": "u-scope", "signed_transaction": purchase.signedTransaction]),
                headers: key)
            #expect(replayed.outcome == "delivered")
        }
    }
}
