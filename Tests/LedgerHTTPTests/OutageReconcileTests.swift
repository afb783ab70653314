import Foundation
import Ledger
import Testing

/// After an outage of the notification endpoint of any length, one reconcile makes balances,
/// entitlements, subscriptions and revenue what they would have been, and Apple's late retries
/// record nothing twice. The same purchases are played twice on the same deterministic
/// simulator: once heard live, once with the endpoint down for the simulated weeks, then
/// reconciled.
@Suite("One reconcile after an outage")
struct OutageReconcileTests {
    /// What a run ends with: balances, entitlements, subscription states, revenue totals and
    /// the effects recorded, in terms that do not depend on the run's wall-clock start.
    struct Outcome: Equatable, CustomStringConvertible {
        var balances: [String: Int] = [:]
        var entitlements: [String: [String]] = [:]
        var subscriptions: [String] = []
        var revenue: [String: Int] = [:]
        var effects: [String: Int64] = [:]
        var description: String { "balances \(balances), entitlements \(entitlements), subscriptions \(subscriptions), revenue \(revenue), effects \(effects)" }
    }

    static func play(outage: Bool) async throws -> Outcome {
        try await LedgerHarness.with(askApple: true) { ledger in
            var users: [String] = []
            var subscriptions: [String] = []
            for index in 0..<3 {
                let user = "u-\(index)"
                users.append(user)
                let (_, coins) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-\(index)")
                #expect(try await ledger.submit(user: user, purchase: coins).outcome == "delivered")
                let (_, monthly) = try await ledger.orderAndBuy(user: user, product: "com.example.pro.monthly", appleId: "apple-\(index)")
                #expect(try await ledger.submit(user: user, purchase: monthly).outcome == "delivered")
                subscriptions.append(monthly.transaction.originalTransactionId)
            }
            let endpoint = ledger.simulator.notificationURL
            if outage { ledger.simulator.notificationURL = "http://127.0.0.1:9/v1/notifications/apple" }
            // Weeks of Apple's life: renewals, a refund, a subscriber who turns auto-renew off.
            _ = try await ledger.simulator.advance(days: 20)
            let firstCoins = try #require(ledger.simulator.transactions(of: "apple-0").first { $0.productId == "com.example.coins100" })
            _ = try await ledger.simulator.refund(transactionId: firstCoins.transactionId)
            try await ledger.simulator.setAutoRenew(originalTransactionId: subscriptions[1], enabled: false)
            _ = try await ledger.simulator.advance(days: 45)
            if outage {
                ledger.simulator.notificationURL = endpoint
                _ = try await AskingAppleTests.reconciler(ledger).run()
                // Apple's own retries arrive after all: nothing is recorded twice.
                let before = try await Self.effects(ledger)
                for sent in ledger.simulator.sentNotifications where sent.version == .v2 {
                    _ = try await ledger.request(.POST, "/v1/notifications/apple", body: sent.body, token: nil)
                }
                #expect(try await Self.effects(ledger) == before, "a late notification recorded something twice")
            } else {
                try await ledger.eventually("every notification is recorded") {
                    try await ledger.count("AppleNotificationReceived") == Int64(ledger.simulator.sentNotifications.filter { $0.version == .v2 }.count)
                }
            }
            var outcome = Outcome(effects: try await Self.effects(ledger))
            for user in users {
                let view = try await ledger.get("/v1/users/\(user)")
                outcome.balances[user] = (view.json["balances"] as? [String: any Sendable])?["coins"] as? Int ?? 0
                outcome.entitlements[user] = (view.json["entitlements"] as? [[String: any Sendable]] ?? []).map {
                    "\($0["product_id"] as? String ?? "?") active=\(($0["active"] as? Bool).map(String.init) ?? "?")"
                }.sorted()
            }
            for original in subscriptions {
                let view = try await ledger.get("/v1/subscriptions/\(original)")
                outcome.subscriptions.append("\(view.json["status"] as? String ?? "?") auto_renew=\((view.json["auto_renew"] as? Bool).map(String.init) ?? "?")")
            }
            let report = try await ledger.get("/v1/reports/revenue?from=2000-01-01&to=2100-12-31", token: LedgerHarness.financeToken)
            for (key, value) in (report.json["totals"] as? [[String: any Sendable]])?.first ?? [:] {
                if let number = value as? Int { outcome.revenue[key] = number }
            }
            return outcome
        }
    }

    static func effects(_ ledger: LedgerHarness) async throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for type in ["PurchaseDelivered", "SubscriptionRenewalSeen", "PurchaseRefunded", "AppleNotificationReceived"] {
            counts[type] = try await ledger.count(type)
        }
        return counts
    }

    @Test("balances, entitlements, subscriptions and revenue after an outage and one reconcile equal a run that lost nothing")
    func sameAsNeverLost() async throws {
        let heard = try await Self.play(outage: false)
        let reconciled = try await Self.play(outage: true)
        #expect(heard.balances == ["u-0": 0, "u-1": 100, "u-2": 100], "\(heard)")
        #expect(heard.effects["SubscriptionRenewalSeen", default: 0] > 0, "renewals happened: \(heard)")
        #expect(reconciled == heard, "heard live: \(heard)\nreconciled: \(reconciled)")
    }
}
