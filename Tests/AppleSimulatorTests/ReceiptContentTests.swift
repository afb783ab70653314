import AppleSimulator
import Foundation
import Testing

@Suite("receipts list what Apple's would")
struct ReceiptContentTests {
    private func items(_ json: [String: Any]?, _ key: String) -> [[String: Any]] {
        if key == "in_app" { return ((json?["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]]) ?? [] }
        return (json?[key] as? [[String: Any]]) ?? []
    }

    @Test("an unfinished consumable stays in receipts; once finished it leaves new ones but not old ones")
    func consumables() async throws {
        try await SimulatorHarness.withServer { running in
            let simulator = running.simulator
            let coins = try await simulator.purchase(appleId: "a", productId: "com.example.coins100")
            try simulator.finish(transactionId: coins.transactionId)
            let removeAds = try await simulator.purchase(appleId: "a", productId: "com.example.removeads")
            try simulator.finish(transactionId: removeAds.transactionId)
            let later = try simulator.refreshReceipt(appleId: "a")

            let old = try await RawHTTP.verify(running.sandboxURL, receipt: coins.receiptData).json
            #expect(items(old, "in_app").map { $0["transaction_id"] as? String } == [coins.transactionId])
            let new = try await RawHTTP.verify(running.sandboxURL, receipt: later).json
            // Non-consumables stay after finishing; the finished consumable is gone.
            #expect(items(new, "in_app").map { $0["transaction_id"] as? String } == [removeAds.transactionId])
        }
    }

    @Test("a refreshed receipt lists renewals in in_app; the purchase's receipt does not")
    func refreshedReceipt() async throws {
        try await SimulatorHarness.withServer { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(appleId: "r", productId: "com.example.pro.monthly")
            try await simulator.advance(days: 40)  // the trial, then renewals on days 7 and 38
            let all = simulator.transactions(of: "r").map(\.transactionId)
            #expect(all.count == 3)
            let refreshed = try #require(
                try await RawHTTP.post("\(running.baseURL)/control/accounts/r/receipt/refresh", body: Data())
                    .json?["receipt_data"] as? String)
            #expect(refreshed != purchase.receiptData)

            let new = try await RawHTTP.verify(running.sandboxURL, receipt: refreshed).json
            #expect(new?["status"] as? Int == 0)
            #expect(items(new, "in_app").compactMap { $0["transaction_id"] as? String } == all)
            #expect(items(new, "in_app").dropFirst().allSatisfy { $0["web_order_line_item_id"] != nil })
            let old = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData).json
            #expect(items(old, "in_app").map { $0["transaction_id"] as? String } == [purchase.transactionId])
            // Both answers carry the same live history and point at the refreshed receipt.
            #expect(Set(items(old, "latest_receipt_info").compactMap { $0["transaction_id"] as? String }) == Set(all))
            #expect(old?["latest_receipt"] as? String == refreshed)

            // A later purchase on the device updates the receipt with device purchases only.
            let coins = try await simulator.purchase(appleId: "r", productId: "com.example.coins100")
            let afterPurchase = try await RawHTTP.verify(running.sandboxURL, receipt: coins.receiptData).json
            #expect(items(afterPurchase, "in_app").map { $0["transaction_id"] as? String }
                == [purchase.transactionId, coins.transactionId])
        }
    }

    @Test("a subscription renewed twice, upgraded and refunded reads exactly as simulated")
    func subscriptionHistory() async throws {
        try await SimulatorHarness.withServer { running in
            let simulator = running.simulator
            let day = SimulatorHarness.dayMs, start = SimulatorHarness.startMs
            let scenario = try await Scenario.renewedTwiceUpgradedRefunded(simulator, appleId: "sub")
            let original = scenario.first.transactionId, upgrade = scenario.upgrade
            let history = Array(scenario.transactions.prefix(3))
            #expect(scenario.first.transaction.isTrialPeriod)
            #expect(scenario.first.transaction.expiresDateMs == start + 7 * day)
            #expect(history.map(\.purchaseDateMs) == [start, start + 7 * day, start + 38 * day])
            #expect(Set(scenario.transactions.map(\.originalTransactionId)) == [original])
            #expect(Set(scenario.transactions.compactMap(\.webOrderLineItemId)).count == 4)
            #expect(upgrade.transaction.purchaseDateMs == start + 40 * day)
            #expect(upgrade.transaction.expiresDateMs == start + 405 * day)

            let json = try await RawHTTP.verify(running.sandboxURL, receipt: upgrade.receiptData).json
            #expect(json?["status"] as? Int == 0)
            // in_app holds what was bought on the device: the trial purchase and the upgrade.
            #expect(items(json, "in_app").map { $0["transaction_id"] as? String } == [original, upgrade.transactionId])
            let latest = items(json, "latest_receipt_info")
            let byId = Dictionary(uniqueKeysWithValues: latest.map { ($0["transaction_id"] as? String ?? "", $0) })
            #expect(Set(byId.keys) == Set(history.map(\.transactionId) + [upgrade.transactionId]))
            #expect(latest.map { $0["transaction_id"] as? String } != (history.map(\.transactionId) + [upgrade.transactionId]))

            let trialItem = try #require(byId[original])
            #expect(trialItem["is_trial_period"] as? String == "true")
            #expect(trialItem["expires_date_ms"] as? String == String(start + 7 * day))
            let upgraded = try #require(byId[history[2].transactionId])
            #expect(upgraded["is_upgraded"] as? String == "true")
            #expect(upgraded["cancellation_date_ms"] as? String == String(start + 40 * day))
            #expect(upgraded["cancellation_reason"] == nil)
            let refunded = try #require(byId[upgrade.transactionId])
            #expect(refunded["product_id"] as? String == "com.example.pro.yearly")
            #expect(refunded["cancellation_date_ms"] as? String == String(start + 42 * day))
            #expect(refunded["cancellation_reason"] as? String == "1")
            #expect(refunded["subscription_group_identifier"] as? String == "20654194")

            let pending = try #require(items(json, "pending_renewal_info").first)
            #expect(pending["original_transaction_id"] as? String == original)
            #expect(pending["auto_renew_status"] as? String == "0")
            #expect(pending["product_id"] as? String == "com.example.pro.yearly")
            #expect(json?["latest_receipt"] as? String == upgrade.receiptData)
        }
    }

    @Test("exclude-old-transactions keeps only the latest period of each subscription")
    func excludeOld() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "b", productId: "com.example.pro.monthly")
            try await running.simulator.advance(days: 100)
            let json = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData, excludeOld: true).json
            let latest = items(json, "latest_receipt_info")
            #expect(latest.count == 1)
            #expect(latest.first?["transaction_id"] as? String == running.simulator.transactions(of: "b").last?.transactionId)
        }
    }

    @Test("billing retry, grace period, recovery and auto-renew off show in pending_renewal_info")
    func billingRetry() async throws {
        try await SimulatorHarness.withServer { running in
            let simulator = running.simulator
            let day = SimulatorHarness.dayMs, start = SimulatorHarness.startMs
            let purchase = try await simulator.purchase(appleId: "c", productId: "com.example.pro.monthly")
            let id = purchase.transactionId
            try await simulator.setBillingFails(originalTransactionId: id, true)
            try await simulator.advance(days: 10)  // the renewal at day 7 fails
            var pending = items(try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData).json, "pending_renewal_info").first
            #expect(pending?["is_in_billing_retry_period"] as? String == "1")
            #expect(pending?["expiration_intent"] as? String == "2")
            #expect(pending?["grace_period_expires_date_ms"] as? String == String(start + 23 * day))
            #expect(simulator.transactions(of: "c").count == 1)

            let recovered = try #require(try await simulator.setBillingFails(originalTransactionId: id, false))
            #expect(recovered.purchaseDateMs == start + 10 * day)
            #expect(recovered.transactionReason == "RENEWAL")
            try await simulator.setAutoRenew(originalTransactionId: id, enabled: false)
            pending = items(try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData).json, "pending_renewal_info").first
            #expect(pending?["is_in_billing_retry_period"] == nil)
            #expect(pending?["grace_period_expires_date_ms"] == nil)
            #expect(pending?["auto_renew_status"] as? String == "0")
            try await simulator.advance(days: 60)
            #expect(try simulator.subscription(id).hasEnded)
            #expect(try simulator.subscription(id).expirationIntent == 1)
            #expect(simulator.transactions(of: "c").count == 2)
        }
    }
}
