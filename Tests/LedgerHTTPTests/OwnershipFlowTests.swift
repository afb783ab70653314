import AppleSimulator
import Foundation
import Testing

/// Ownership per original transaction and per Apple account, read through the API after real
/// purchases: receipts from the simulator over HTTP, the projections in PostgreSQL.
@Suite("Ownership and Apple accounts")
struct OwnershipFlowTests {
    @Test("a receipt's purchases form one Apple account, which names every user it paid for; ownership keeps its history")
    func appleAccountFromReceipts() async throws {
        try await LedgerHarness.with { ledger in
            let (_, removeAds) = try await ledger.orderAndBuy(user: "alice", product: "com.example.removeads", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: removeAds).outcome == "delivered")
            let removeAdsOriginal = removeAds.transaction.originalTransactionId
            // Alone so far: the account is named after its only purchase.
            let first = try await ledger.get("/v1/ownership/\(removeAdsOriginal)")
            #expect(first.status == 200)
            #expect(first.json["owner_user_id"] as? String == "alice")
            #expect(first.json["product_id"] as? String == "com.example.removeads")
            #expect(first.json["apple_account"] as? String == "otx:\(removeAdsOriginal)")

            // The same Apple ID buys coins for alice, then (accounts switched in the app) for bob.
            let (_, coins) = try await ledger.orderAndBuy(user: "alice", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: coins).outcome == "delivered")
            let (_, bobCoins) = try await ledger.orderAndBuy(user: "bob", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "bob", purchase: bobCoins).outcome == "delivered")
            // Another Apple ID, another account.
            let (_, carolCoins) = try await ledger.orderAndBuy(user: "carol", product: "com.example.coins100", appleId: "apple-2")
            #expect(try await ledger.submit(user: "carol", purchase: carolCoins).outcome == "delivered")

            let originals = [removeAds, coins, bobCoins].map(\.transaction.originalTransactionId).sorted()
            let name = "otx:\(originals[0])"
            let account = try await ledger.get("/v1/apple-accounts/\(name)", token: LedgerHarness.financeToken)
            #expect(account.status == 200, "\(account.json)")
            #expect(account.json["apple_account"] as? String == name)
            #expect(account.json["users"] as? [String] == ["alice", "bob"])
            #expect(account.json["original_transaction_ids"] as? [String] == originals)
            // Any member's otx: name finds the account, answered under its current name.
            let byMember = try await ledger.get("/v1/apple-accounts/otx:\(originals[2])", token: LedgerHarness.financeToken)
            #expect(byMember.json["apple_account"] as? String == name)

            #expect(try await ledger.get("/v1/users/alice").json["apple_accounts"] as? [String] == [name])
            #expect(try await ledger.get("/v1/users/bob").json["apple_accounts"] as? [String] == [name])
            let carol = try await ledger.get("/v1/users/carol").json["apple_accounts"] as? [String]
            #expect(carol == ["otx:\(carolCoins.transaction.originalTransactionId)"])
            // An id the ledger never recorded is no one: 404, as an erased one (docs/erasure.md).
            #expect(try await ledger.get("/v1/users/nobody").status == 404)

            // A consumable's holder is whoever it was delivered to.
            let coinsOwner = try await ledger.get("/v1/ownership/\(bobCoins.transaction.originalTransactionId)")
            #expect(coinsOwner.json["owner_user_id"] as? String == "bob")
            #expect(coinsOwner.json["apple_account"] as? String == name)

            // Scope, and the unknown.
            let withAppToken = try await ledger.get("/v1/apple-accounts/\(name)")
            #expect(withAppToken.status == 403)
            #expect(withAppToken.errorCode == "forbidden")
            let unknown = try await ledger.get("/v1/apple-accounts/otx:424242", token: LedgerHarness.financeToken)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "not_found")
            let unknownOwnership = try await ledger.get("/v1/ownership/424242")
            #expect(unknownOwnership.status == 404)
            #expect(unknownOwnership.errorCode == "not_found")
        }
    }

    @Test("a signed transaction's appTransactionId names its Apple account and unites it with that account's receipts")
    func appleAccountFromSignedTransaction() async throws {
        try await LedgerHarness.with { ledger in
            let (_, signed) = try await ledger.orderAndBuy(user: "dave", product: "com.example.removeads", appleId: "apple-7")
            let answer = try await ledger.post("/v1/transactions", ["user_id": "dave", "signed_transaction": signed.signedTransaction])
            #expect(answer.outcome == "delivered")
            let ownership = try await ledger.get("/v1/ownership/\(signed.transaction.originalTransactionId)")
            let name = try #require(ownership.json["apple_account"] as? String)
            #expect(name.wholeMatch(of: /70[0-9]{16}/) != nil, "\(name)")

            // Later the same Apple ID pays by receipt for erin: one account, both users.
            let (_, coins) = try await ledger.orderAndBuy(user: "erin", product: "com.example.coins100", appleId: "apple-7")
            #expect(try await ledger.submit(user: "erin", purchase: coins).outcome == "delivered")
            let account = try await ledger.get("/v1/apple-accounts/\(name)", token: LedgerHarness.financeToken)
            #expect(account.json["apple_account"] as? String == name)
            #expect(account.json["users"] as? [String] == ["dave", "erin"])
            #expect(try await ledger.get("/v1/users/erin").json["apple_accounts"] as? [String] == [name])
        }
    }

    @Test("under transfer and then a refund, the history lists delivered, transferred and refunded, and nobody holds it")
    func historyOfTransferAndRefund() async throws {
        try await LedgerHarness.with(policy: .transfer) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "alice", product: "com.example.removeads", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: purchase).outcome == "delivered")
            #expect(try await ledger.submit(user: "bob", purchase: purchase).status == 200)
            let original = purchase.transaction.originalTransactionId
            let transferred = try await ledger.get("/v1/ownership/\(original)", token: LedgerHarness.financeToken)
            #expect(transferred.json["owner_user_id"] as? String == "bob")

            _ = try await ledger.simulator.refund(transactionId: purchase.transactionId)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            let refunded = try await ledger.get("/v1/ownership/\(original)")
            #expect(refunded.json["owner_user_id"] is NSNull, "\(refunded.json)")
            let history = try #require(refunded.json["history"] as? [[String: any Sendable]])
            #expect(history.map { $0["reason"] as? String } == ["delivered", "transferred", "refunded"])
            #expect(history.map { $0["user_id"] as? String } == ["alice", "bob", nil])
            let positions = history.compactMap { $0["position"] as? Int }
            #expect(positions == positions.sorted() && Set(positions).count == 3)
            #expect(history.allSatisfy { ($0["recorded_at"] as? String)?.hasSuffix("Z") == true })
        }
    }
}
