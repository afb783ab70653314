import AppleSimulator
import Foundation
import Testing

/// The control API as the demo and benchmarks drive it: JSON over HTTP only.
@Suite("the control API drives a subscription's whole life over HTTP")
struct ControlAPITests {
    @Test("purchase, upgrade, auto-renew off, billing failure, recovery, refund and finish")
    func subscriptionOverHTTP() async throws {
        try await SimulatorHarness.withServer { running in
            let control = "\(running.baseURL)/control"
            let bought = try #require(
                try await RawHTTP.post("\(control)/purchases", json: ["apple_id": "h", "product_id": "com.example.pro.monthly"]).json)
            let original = try #require(bought["original_transaction_id"] as? String)
            let subscription = "\(control)/subscriptions/\(original)"

            let billing = try await RawHTTP.post("\(subscription)/billing", json: ["fails": true])
            #expect(billing.json?["billing_fails"] as? Bool == true)
            _ = try await RawHTTP.post("\(control)/clock/advance", json: ["days": 8])
            #expect(try await RawHTTP.get(subscription).json?["billing_retry_since_ms"] != nil)
            let recovered = try await RawHTTP.post("\(subscription)/billing", json: ["fails": false])
            #expect(recovered.json?["billing_retry_since_ms"] == nil)
            let recovery = try #require(recovered.json?["latest_transaction_id"] as? String)

            let upgrade = try await RawHTTP.post("\(subscription)/product", json: ["product_id": "com.example.pro.yearly"])
            #expect(upgrade.status == 201)
            #expect(upgrade.json?["original_transaction_id"] as? String == original)
            let downgrade = try await RawHTTP.post("\(subscription)/product", json: ["product_id": "com.example.pro.monthly"])
            #expect(downgrade.status == 202)
            #expect(downgrade.json?["auto_renew_product_id"] as? String == "com.example.pro.monthly")

            let off = try await RawHTTP.post("\(subscription)/auto-renew", json: ["enabled": false])
            #expect(off.json?["auto_renew_enabled"] as? Bool == false)

            let upgradeId = try #require(upgrade.json?["transaction_id"] as? String)
            let refund = try await RawHTTP.post("\(control)/transactions/\(upgradeId)/refund", json: ["reason": 1])
            #expect(refund.json?["cancellation_reason"] as? Int == 1)
            #expect(try await RawHTTP.get(subscription).json?["is_revoked"] as? Bool == true)

            let coins = try #require(
                try await RawHTTP.post("\(control)/purchases", json: ["apple_id": "h", "product_id": "com.example.coins100"]).json)
            let coinsId = try #require(coins["transaction_id"] as? String)
            #expect(try await RawHTTP.post("\(control)/transactions/\(coinsId)/finish", body: Data()).status == 204)
            #expect(try await RawHTTP.get("\(control)/transactions/\(coinsId)").json?["is_finished"] as? Bool == true)
            let receipt = try #require(
                try await RawHTTP.post("\(control)/accounts/h/receipt/refresh", body: Data()).json?["receipt_data"] as? String)
            let verified = try await RawHTTP.verify(running.sandboxURL, receipt: receipt).json
            let inApp = ((verified?["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]]) ?? []
            // A refreshed receipt lists renewals (here the billing recovery) in in_app too.
            #expect(inApp.map { $0["transaction_id"] as? String } == [original, recovery, upgradeId])
            let history = try await RawHTTP.get("\(control)/accounts/h/transactions")
            #expect((try JSONSerialization.jsonObject(with: history.body) as? [Any])?.count == 4)
            #expect(try await RawHTTP.get("\(control)/subscriptions/nope").status == 404)
        }
    }
}
