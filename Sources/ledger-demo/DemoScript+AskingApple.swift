import AppleSimulator
import Foundation
import PurchaseLedgerCLI

extension DemoScript {
    /// The ledger asking Apple: a spend, a refund request answered with what was used, and a
    /// refund whose notification was lost, recovered by one reconciliation.
    func playAskingApple(reconcile: @Sendable () async throws -> Int) async throws {
        print("\nasking Apple (App Store Server API, the simulator checking our ES256 token):")
        // Frank buys 100 coins and spends 40 of them.
        let coins = try await buy(user: "frank", apple: "apple-frank", product: "com.example.coins100")
        try await report("frank", "coins100 receipt", try await submitReceipt(user: "frank", coins))
        let spent = try await post("/v1/users/frank/spend", ["unit": "coins", "amount": 40, "spend_id": "frank-hint-1", "reason": "a hint"])
        print("  frank  spends 40 coins               → \(spent.status), balance \(spent.json["balance"] ?? "?")")
        // He asks Apple for a refund; he agreed that consumption data may be shared.
        _ = try await post("/v1/users/frank/consent", ["consumption_data": true])
        try await simulator.requestConsumption(transactionId: coins.transactionId)
        try await waitUntil("the ledger answers Apple's refund request") { !simulator.consumptionRequests.isEmpty }
        if let told = simulator.consumptionRequests.first?.information {
            print("  Apple asks about frank's coins      → told: \(told.rawDeliveryStatus), \((told.consumptionPercentage ?? 0) / 1000)% consumed, consent \(told.customerConsented)")
        }
        // Grace's refund notification never arrives (the endpoint is down); reconcile finds it.
        let lost = try await buy(user: "grace", apple: "apple-grace", product: "com.example.coins100")
        try await report("grace", "coins100 receipt", try await submitReceipt(user: "grace", lost))
        let endpoint = simulator.notificationURL
        simulator.notificationURL = "http://127.0.0.1:9/v1/notifications/apple"
        _ = try await simulator.refund(transactionId: lost.transactionId)
        simulator.notificationURL = endpoint
        // Her own receipt is all this read needs: it waits for that position, not for the log's head.
        let before = ((try await get("/v1/users/grace", afterOwnWrite: true))["balances"] as? [String: Any])?["coins"] ?? "?"
        let recovered = try await reconcile()
        let after = ((try await get("/v1/users/grace"))["balances"] as? [String: Any])?["coins"] ?? "?"
        print("  grace's refund, notification lost   → coins \(before); reconcile recorded \(recovered) missed notification(s); coins \(after)\n")
    }
}
