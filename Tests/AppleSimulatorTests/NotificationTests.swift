import AppleSimulator
import Foundation
import Testing

@Suite("notifications are posted as Apple posts them")
struct NotificationTests {
    @Test("purchase, renewal, auto-renew off and refund reach the configured URL in v1 and v2")
    func lifecycle() async throws {
        try await SimulatorHarness.withServer { running in
            let simulator = running.simulator
            simulator.notificationURL = running.notificationSinkURL
            let purchase = try await simulator.purchase(appleId: "n", productId: "com.example.pro.monthly")
            try await simulator.advance(days: 8)
            try await simulator.setAutoRenew(originalTransactionId: purchase.transactionId, enabled: false)
            let renewal = try #require(simulator.transactions(of: "n").last)
            try await simulator.refund(transactionId: renewal.transactionId)

            let sent = simulator.sentNotifications
            #expect(sent.allSatisfy { $0.responseStatus == 200 })
            // v1 announced a refunded subscription as CANCEL; v2 says REFUND for every type.
            #expect(sent.filter { $0.version == .v1 }.map(\.notificationType)
                == ["INITIAL_BUY", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS", "CANCEL"])
            let v2 = sent.filter { $0.version == .v2 }
            #expect(v2.map(\.notificationType) == ["SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS", "REFUND"])
            #expect(v2.map(\.subtype) == ["INITIAL_BUY", nil, "AUTO_RENEW_DISABLED", nil])
            #expect(simulator.sinkNotifications == sent.map(\.body))

            let v1Status = try #require(
                try JSONSerialization.jsonObject(with: Data(sent[4].body.utf8)) as? [String: Any])
            #expect(v1Status["auto_renew_status"] as? String == "false")
            #expect(v1Status["auto_renew_status_change_date_ms"] as? String == String(SimulatorHarness.startMs + 8 * SimulatorHarness.dayMs))

            let v1Refund = try #require(
                try JSONSerialization.jsonObject(with: Data(sent[6].body.utf8)) as? [String: Any])
            #expect(v1Refund["notification_type"] as? String == "CANCEL")
            #expect(v1Refund["cancellation_date_ms"] as? String == String(SimulatorHarness.startMs + 8 * SimulatorHarness.dayMs))
            #expect(v1Refund["environment"] as? String == "Sandbox")
            #expect(v1Refund["bid"] as? String == "com.example.app")
            let unified = try #require(v1Refund["unified_receipt"] as? [String: Any])
            #expect((unified["latest_receipt_info"] as? [[String: Any]])?.count == 2)

            let v2Refund = try #require(
                try JSONSerialization.jsonObject(with: Data(sent[7].body.utf8)) as? [String: String])
            let payload = try jwsPayload(try #require(v2Refund["signedPayload"]))
            #expect(payload["notificationType"] as? String == "REFUND")
            #expect(payload["version"] as? String == "2.0")
            #expect(int64(payload["signedDate"]) == SimulatorHarness.startMs + 8 * SimulatorHarness.dayMs)
            let data = try #require(payload["data"] as? [String: Any])
            #expect(data["bundleId"] as? String == "com.example.app")
            #expect(data["environment"] as? String == "Sandbox")
            #expect(data["status"] as? Int == 5)
            let transaction = try jwsPayload(try #require(data["signedTransactionInfo"] as? String))
            #expect(transaction["transactionId"] as? String == renewal.transactionId)
            #expect(transaction["revocationReason"] as? Int == 0)
            #expect(int64(transaction["revocationDate"]) == SimulatorHarness.startMs + 8 * SimulatorHarness.dayMs)
            let renewalInfo = try jwsPayload(try #require(data["signedRenewalInfo"] as? String))
            #expect(renewalInfo["autoRenewStatus"] as? Int == 0)
            #expect(renewalInfo["originalTransactionId"] as? String == purchase.transactionId)
        }
    }

    @Test("a failing card: DID_FAIL_TO_RENEW in grace, GRACE_PERIOD_EXPIRED, then EXPIRED after 60 days of retry")
    func billingRetryTimeline() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration(notificationVersions: [.v2]))
        let purchase = try await simulator.purchase(appleId: "card", productId: "com.example.pro.monthly")
        try await simulator.setBillingFails(originalTransactionId: purchase.transactionId, true)
        try await simulator.advance(days: 80)

        let sent = simulator.sentNotifications
        #expect(sent.map(\.notificationType) == ["SUBSCRIBED", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "EXPIRED"])
        #expect(sent.map(\.subtype) == ["INITIAL_BUY", "GRACE_PERIOD", nil, "BILLING_RETRY"])
        let payloads = try sent.map { notification in
            let body = try JSONSerialization.jsonObject(with: Data(notification.body.utf8)) as? [String: String]
            return try jwsPayload(body?["signedPayload"] ?? "")
        }
        let day = SimulatorHarness.dayMs, start = SimulatorHarness.startMs
        #expect(payloads.map { int64($0["signedDate"]) } == [start, start + 7 * day, start + 23 * day, start + 67 * day])
        #expect(payloads.map { ($0["data"] as? [String: Any])?["status"] as? Int } == [1, 4, 3, 2])
        #expect(try simulator.subscription(purchase.transactionId).hasEnded)
        #expect(simulator.transactions(of: "card").count == 1)
    }

    @Test("an unreachable receiver is recorded, never thrown")
    func unreachable() async throws {
        var configuration = SimulatorHarness.configuration()
        configuration.notificationURL = "http://127.0.0.1:1/nowhere"
        configuration.notificationTimeout = .seconds(2)
        let simulator = try AppleSimulator(configuration: configuration)
        _ = try await simulator.purchase(appleId: "x", productId: "com.example.removeads")
        let sent = simulator.sentNotifications
        #expect(sent.count == 1)
        #expect(sent.first?.notificationType == "ONE_TIME_CHARGE")
        #expect(sent.first?.responseStatus == nil)
        #expect(sent.first?.deliveryError != nil)
    }
}
