import AppStore
import AppStoreClient
import AppleSimulator
import Foundation
import Ledger
import Primitives
import Testing

@Suite("POST /v1/transactions: StoreKit 2 signed transactions, verified locally")
struct SignedTransactionFlowTests {
    @Test("a signed transaction is delivered to the order its app_account_token names, without a call to Apple")
    func delivers() async throws {
        try await LedgerHarness.with { ledger in
            let (order, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let calls = ledger.simulator.verifyReceiptCalls.values.reduce(0, +)
            let answer = try await ledger.post("/v1/transactions", ["user_id": "u1", "signed_transaction": purchase.signedTransaction])
            #expect(answer.status == 200)
            #expect(answer.outcome == "delivered")
            #expect(answer.deliveries.first?["order_id"] as? String == order["order_id"] as? String)
            #expect(ledger.simulator.verifyReceiptCalls.values.reduce(0, +) == calls)
        }
    }

    @Test("a receipt and a signed transaction for the same purchase deliver once between them")
    func onceAcrossPaths() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let signed = try await ledger.post("/v1/transactions", ["user_id": "u1", "signed_transaction": purchase.signedTransaction])
            let receipt = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(signed.outcome == "delivered")
            #expect(receipt.outcome == "already_delivered")
            #expect(try await ledger.count("PurchaseDelivered") == 1)
        }
    }

    @Test("a re-signed (tampered) JWS is signature_invalid and delivers nothing")
    func forged() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let parts = purchase.signedTransaction.split(separator: ".").map(String.init)
            // Change the payload (quantity 1 → 50), keep the header and Apple's signature.
            let payloadData = try #require(Base64URL.decode(parts[1]))
            var json = try #require(try JSONSerialization.jsonObject(with: payloadData) as? [String: Any])
            json["quantity"] = 50
            let forgedPayload = Base64URL.encode(try JSONSerialization.data(withJSONObject: json))
            let forged = [parts[0], forgedPayload, parts[2]].joined(separator: ".")
            let answer = try await ledger.post("/v1/transactions", ["user_id": "u1", "signed_transaction": forged])
            #expect(answer.status == 422)
            #expect(answer.errorCode == "signature_invalid")
            #expect(try await ledger.count("PurchaseDelivered") == 0)
        }
    }

    @Test("a JWS signed by a CA the ledger does not trust is signature_invalid")
    func untrusted() async throws {
        try await LedgerHarness.with { ledger in
            // A second simulator has a CA of its own.
            let other = try AppleSimulator(configuration: AppleSimulator.Configuration(machineClock: .system))
            let purchase = try await other.purchase(appleId: "apple-9", productId: "com.example.coins100", environment: .production)
            let answer = try await ledger.post("/v1/transactions", ["user_id": "u1", "signed_transaction": purchase.signedTransaction])
            #expect(answer.status == 422)
            #expect(answer.errorCode == "signature_invalid")
        }
    }
}
