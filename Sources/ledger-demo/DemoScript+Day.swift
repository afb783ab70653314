import AppleSimulator
import Foundation
import PurchaseLedgerCLI

/// The rest of the demo's day: the stories support meets (a restore on a second device, an
/// account switch, an upgrade, a billing retry) and a crowd of users over simulated days.
extension DemoScript {
    /// Returns Ivan's subscription (its original transaction id).
    func playStories(carolApple: String, aliceMonthly: PurchaseResult) async throws -> String {
        // Carol restores her purchases on a second device: the same Apple ID's refreshed
        // receipt, sent without a transaction id. Nothing is delivered twice.
        let restored = try simulator.refreshReceipt(appleId: carolApple)
        try await report("carol", "restore, second device", try await post("/v1/receipts", ["user_id": "carol", "receipt_data": restored]))
        // Gina orders, then the app switches to Hank's account before the receipt is sent:
        // the token names Gina's order, the purchase goes to Hank's own open order.
        _ = try await post("/v1/orders", ["user_id": "hank", "product_id": "com.example.coins100"])
        let switched = try await buy(user: "gina", apple: "apple-gina", product: "com.example.coins100")
        let answer = try await submitReceipt(user: "hank", switched)
        try await report("hank", "receipt, switched account", answer)
        // Alice upgrades her monthly plan to yearly; Ivan's card starts failing (billing retry).
        _ = try await simulator.changeProduct(originalTransactionId: aliceMonthly.transaction.originalTransactionId, to: "com.example.pro.yearly")
        let ivan = try await buy(user: "ivan", apple: "apple-ivan", product: "com.example.pro.monthly")
        try await report("ivan", "pro.monthly receipt", try await submitReceipt(user: "ivan", ivan))
        try await simulator.setBillingFails(originalTransactionId: ivan.transaction.originalTransactionId, true)
        _ = try await simulator.advance(days: 8)
        print("  (alice upgrades to yearly; ivan's renewal fails after his trial: billing retry)")
        return ivan.transaction.originalTransactionId
    }

    /// `users` users over `days` simulated days, 8 clients at a time: most buy coins, some a
    /// monthly plan with its trial, a few remove ads; then a fortnight passes for renewals.
    func playCrowd(users: Int, days: Int) async throws {
        let perDay = users / days
        var answers: [Int: Int] = [:]
        for day in 0..<days {
            let today = try await withThrowingTaskGroup(of: [Int].self) { group in
                for client in 0..<8 {
                    group.addTask {
                        var statuses: [Int] = []
                        for index in stride(from: day * perDay + client, to: (day + 1) * perDay, by: 8) {
                            let product = index % 25 == 0 ? "com.example.removeads" : (index % 6 == 0 ? "com.example.pro.monthly" : "com.example.coins100")
                            let user = "user-\(index)"
                            let purchase = try await buy(user: user, apple: "apple-\(user)", product: product)
                            statuses.append(try await submitReceipt(user: user, purchase).status)
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            for status in today { answers[status, default: 0] += 1 }
            _ = try await simulator.advance(days: 1)
        }
        _ = try await simulator.advance(days: 14)
        let summary = answers.keys.sorted().map { "\(answers[$0] ?? 0) × \($0)" }.joined(separator: ", ")
        print("  crowd  \(users) users over \(days) simulated days, 8 clients → \(summary); then +14 days of renewals")
        guard answers.keys.allSatisfy({ $0 == 200 }) else { throw DemoError("a crowd purchase was not delivered: \(summary)") }
    }
}
