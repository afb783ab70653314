import AppStore
import AppleSimulator
import Foundation
import Testing

/// What Apple sends after a sale: REFUND, REVOKE (Family Sharing) and CONSUMPTION_REQUEST, each
/// checked through the AppStore verifier trusting the simulator's root.
@Suite("refunds, revocations and consumption requests notify as Apple does")
struct RevocationNotificationTests {
    static let day = SimulatorHarness.dayMs
    static let start = SimulatorHarness.startMs

    static func simulator() throws -> AppleSimulator {
        try AppleSimulator(configuration: SimulatorHarness.configuration(notificationVersions: [.v1, .v2]))
    }

    /// The last v2 notification of `type`, verified as the ledger would verify it.
    static func verified(_ simulator: AppleSimulator, _ type: String) async throws -> VerifiedNotification {
        let body = simulator.sentNotifications.last { $0.version == .v2 && $0.notificationType == type }?.body ?? ""
        return try await SignatureVerificationTests.verifier(simulator, environment: .sandbox, appAppleID: 1234)
            .verifyNotification(requestBody: Data(body.utf8))
    }

    @Test("a refund sends v2 REFUND; v1 says REFUND for one-time purchases and CANCEL for subscriptions", arguments: [
        ("com.example.coins100", "REFUND"), ("com.example.removeads", "REFUND"), ("com.example.pro.monthly", "CANCEL"),
    ])
    func refund(productId: String, v1Type: String) async throws {
        let simulator = try Self.simulator()
        let purchase = try await simulator.purchase(appleId: "refund", productId: productId)
        try await simulator.advance(days: 1)
        try await simulator.refund(transactionId: purchase.transactionId, reason: 1)

        let sent = simulator.sentNotifications.suffix(2)
        #expect(sent.map(\.version) == [.v1, .v2])
        #expect(sent.map(\.notificationType) == [v1Type, "REFUND"])
        let verified = try await Self.verified(simulator, "REFUND")
        #expect(verified.payload.notificationType == .refund)
        #expect(verified.payload.data?.rawConsumptionRequestReason == nil)
        let transaction = try #require(verified.transaction?.payload)
        #expect(transaction.transactionId == purchase.transactionId)
        #expect(transaction.revocationDate == Self.start + Self.day)
        #expect(transaction.rawRevocationReason == 1)
        #expect(transaction.revocationType == .refundFull)
        // Only subscriptions have a status: refunding the current period revokes it.
        let status: Int? = productId == "com.example.pro.monthly" ? 5 : nil
        #expect(verified.payload.data?.rawStatus == status)
    }

    @Test("a Family Sharing revocation sends REVOKE with a revocation date and no reason",
          arguments: ["com.example.removeads", "com.example.pro.monthly"])
    func revoke(productId: String) async throws {
        let simulator = try Self.simulator()
        let purchase = try await simulator.purchase(appleId: "family", productId: productId)
        try await simulator.advance(days: 2)
        let revoked = try await simulator.revoke(transactionId: purchase.transactionId)
        #expect(revoked.cancellationDateMs == Self.start + 2 * Self.day)
        #expect(revoked.cancellationReason == nil)
        #expect(revoked.revocationType == "FAMILY_REVOKE")

        #expect(simulator.sentNotifications.suffix(2).map(\.notificationType) == ["REVOKE", "REVOKE"])
        let verified = try await Self.verified(simulator, "REVOKE")
        #expect(verified.payload.notificationType == .revoke)
        let transaction = try #require(verified.transaction?.payload)
        #expect(transaction.transactionId == purchase.transactionId)
        #expect(transaction.revocationDate == Self.start + 2 * Self.day)
        #expect(transaction.rawRevocationReason == nil)
        #expect(transaction.revocationType == .familyRevoke)
        if productId == "com.example.pro.monthly" {
            #expect(verified.payload.data?.rawStatus == 5)
            #expect(try simulator.subscription(purchase.transactionId).isRevoked)
        }
        // Gone is gone: neither a second revocation nor a refund.
        await #expect(throws: SimulatorError.self) { _ = try await simulator.revoke(transactionId: purchase.transactionId) }
        await #expect(throws: SimulatorError.self) { _ = try await simulator.refund(transactionId: purchase.transactionId) }
    }

    @Test("a consumption request sends CONSUMPTION_REQUEST with the customer's reason and changes nothing")
    func consumptionRequest() async throws {
        let simulator = try Self.simulator()
        let coins = try await simulator.purchase(appleId: "asks", productId: "com.example.coins100")
        try await simulator.requestConsumption(transactionId: coins.transactionId, reason: "UNINTENDED_PURCHASE")

        #expect(simulator.sentNotifications.suffix(2).map(\.notificationType)
            == ["CONSUMPTION_REQUEST", "CONSUMPTION_REQUEST"])
        let verified = try await Self.verified(simulator, "CONSUMPTION_REQUEST")
        #expect(verified.payload.notificationType == .consumptionRequest)
        #expect(verified.payload.data?.rawConsumptionRequestReason == "UNINTENDED_PURCHASE")
        #expect(verified.transaction?.payload.transactionId == coins.transactionId)
        #expect(verified.transaction?.payload.revocationDate == nil)
        #expect(try simulator.transaction(coins.transactionId).cancellationDateMs == nil)

        // Apple then decides; once refunded, there is nothing left to ask about.
        try await simulator.refund(transactionId: coins.transactionId)
        await #expect(throws: SimulatorError.self) {
            try await simulator.requestConsumption(transactionId: coins.transactionId)
        }
    }

    @Test("the control API revokes and asks for consumption data")
    func overHTTP() async throws {
        try await SimulatorHarness.withServer(SimulatorHarness.configuration(notificationVersions: [.v2])) { running in
            let control = "\(running.baseURL)/control"
            let bought = try await RawHTTP.post(
                "\(control)/purchases", json: ["apple_id": "api", "product_id": "com.example.coins100"])
            let coins = try #require(bought.json?["transaction_id"] as? String)
            let asked = try await RawHTTP.post(
                "\(control)/transactions/\(coins)/consumption-request", json: ["reason": "FULFILLMENT_ISSUE"])
            #expect(asked.status == 202)
            let defaulted = try await RawHTTP.post("\(control)/transactions/\(coins)/consumption-request", body: Data())
            #expect(defaulted.status == 202)

            let revoked = try await RawHTTP.post("\(control)/transactions/\(coins)/revoke", body: Data())
            #expect(revoked.status == 200)
            #expect(revoked.json?["revocation_type"] as? String == "FAMILY_REVOKE")
            #expect(int64(revoked.json?["cancellation_date_ms"]) == SimulatorHarness.startMs)
            #expect(revoked.json?["cancellation_reason"] == nil)
            #expect(try await RawHTTP.post("\(control)/transactions/\(coins)/revoke", body: Data()).status == 400)
            #expect(try await RawHTTP.post("\(control)/transactions/nope/revoke", body: Data()).status == 404)

            let sent = running.simulator.sentNotifications
            #expect(sent.map(\.notificationType) == ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "CONSUMPTION_REQUEST", "REVOKE"])
            let reasons = try sent.filter { $0.notificationType == "CONSUMPTION_REQUEST" }.map { notification in
                let body = try JSONSerialization.jsonObject(with: Data(notification.body.utf8)) as? [String: String]
                let payload = try jwsPayload(body?["signedPayload"] ?? "")
                return (payload["data"] as? [String: Any])?["consumptionRequestReason"] as? String
            }
            #expect(reasons == ["FULFILLMENT_ISSUE", "UNINTENDED_PURCHASE"])
        }
    }
}
