import AppStore
import AppleSimulator
import Foundation
import Primitives
import Testing

/// The simulator sells a 12-month commitment billed monthly (`com.example.pro.committed`, 4.99 USD
/// an instalment, 59.88 the commitment): each instalment signs `billingPlanType` `MONTHLY` and
/// `commitmentInfo`, its renewal info `renewalBillingPlanType` and `commitmentInfo`, read here
/// by the ledger's own decoder.
@Suite("A 12-month commitment billed monthly")
struct SimulatedCommitmentTests {
    static let product = "com.example.pro.committed"
    /// 2026-01-01T00:00:00Z and 2027-01-01: the ends of the first two commitments bought at the
    /// harness's start (2025-01-01).
    static let firstEnd: Int64 = 1_767_225_600_000
    static let secondEnd: Int64 = 1_798_761_600_000

    static func decode<T: Decodable>(_ type: T.Type, jws: String) throws -> T {
        let parts = jws.split(separator: ".")
        let data = try #require(parts.count == 3 ? Base64URL.decode(parts[1]) : nil)
        return try JSONDecoder().decode(type, from: data)
    }

    static func signed(_ simulator: AppleSimulator, appleId: String) throws -> [SignedTransaction] {
        try simulator.transactions(of: appleId).sorted { $0.purchaseDateMs < $1.purchaseDateMs }.map {
            try decode(SignedTransaction.self, jws: try simulator.signedTransaction($0.transactionId))
        }
    }

    @Test("each instalment signs MONTHLY, its number, the commitment's price and end; the thirteenth starts a new commitment")
    func instalments() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration(notificationVersions: [.v2]))
        let purchase = try await simulator.purchase(appleId: "committed", productId: Self.product, environment: .production)
        #expect(purchase.transaction.billingPlanType == "MONTHLY")
        #expect(purchase.transaction.commitment?.billingPeriodNumber == 1)
        #expect(!purchase.transaction.isTrialPeriod, "a commitment starts paid")

        // Day 62 (2025-03-04): renewed on Feb 1 and Mar 1.
        _ = try await simulator.advance(days: 62)
        var signed = try Self.signed(simulator, appleId: "committed")
        #expect(signed.map(\.billingPlanType) == [.monthly, .monthly, .monthly])
        #expect(signed.map { $0.commitmentInfo?.billingPeriodNumber } == [1, 2, 3])
        #expect(signed.allSatisfy { $0.commitmentInfo?.totalBillingPeriods == 12 && $0.commitmentInfo?.commitmentPrice == 59_880 })
        #expect(signed.allSatisfy { $0.commitmentInfo?.commitmentExpiresDate == Self.firstEnd })
        #expect(signed.map(\.price) == [4990, 4990, 4990], "each instalment is billed at its own price")

        // The last renewal's renewal info: the commitment renews at its end, billed monthly again.
        let renewed = try #require(simulator.sentNotifications.last { $0.notificationType == "DID_RENEW" })
        let payload = try jwsPayload(try #require(renewed.signedPayload))
        let renewalJWS = try #require((payload["data"] as? [String: Any])?["signedRenewalInfo"] as? String)
        let renewal = try Self.decode(SignedRenewalInfo.self, jws: renewalJWS)
        #expect(renewal.renewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentAutoRenewProductId == Self.product)
        #expect(renewal.commitmentInfo?.commitmentWillAutoRenew == true)
        #expect(renewal.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentRenewalDate == Self.firstEnd)
        #expect(renewal.commitmentInfo?.commitmentRenewalPrice == 4990)

        // Day 366 (2026-01-02): instalments 4 … 12, then the first of the next commitment.
        _ = try await simulator.advance(days: 304)
        signed = try Self.signed(simulator, appleId: "committed")
        #expect(signed.map { $0.commitmentInfo?.billingPeriodNumber ?? 0 } == Array(Int64(1)...12) + [1])
        #expect(signed[11].commitmentInfo?.commitmentExpiresDate == Self.firstEnd)
        #expect(signed[12].commitmentInfo?.commitmentExpiresDate == Self.secondEnd)
    }

    @Test("a plan billed up front signs no billing plan and no commitment, as before")
    func upfrontUnchanged() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration(notificationVersions: [.v2]))
        let purchase = try await simulator.purchase(appleId: "yearly", productId: "com.example.pro.yearly", environment: .production)
        let payload = try jwsPayload(purchase.signedTransaction)
        #expect(payload["billingPlanType"] == nil && payload["commitmentInfo"] == nil)
        #expect(purchase.transaction.commitment == nil)
    }
}
