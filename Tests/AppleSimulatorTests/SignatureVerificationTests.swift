import AppStore
import AppleSimulator
import Foundation
import Testing

/// The simulator's JWS through the AppStore module's verifier, trusting the simulator's root the
/// way the ledger does: a DER file named in `APPLE_ROOT_CERTIFICATES`.
@Suite("the simulator's signatures verify with the AppStore verifier")
struct SignatureVerificationTests {
    /// `appAppleID` only for notifications: a transaction's payload carries no `appAppleId`
    /// (Apple's library checks it on notifications only).
    static func verifier(
        _ simulator: AppleSimulator, environment: AppStoreEnvironment, appAppleID: Int64? = nil
    ) throws -> SignedDataVerifier {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("simulator-root-\(UUID().uuidString).der").path
        try Data(simulator.rootCertificateDER).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let roots = try AppleRootCertificates.load(paths: [path])
        return SignedDataVerifier(
            rootCertificates: roots, bundleID: "com.example.app", environment: environment, appAppleID: appAppleID)
    }

    @Test("a signed transaction verifies at its signedDate and decodes to what was bought")
    func transaction() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let purchase = try await simulator.purchase(
            appleId: "v", productId: "com.example.pro.yearly", environment: .production)
        let verified = try await Self.verifier(simulator, environment: .production)
            .verifyTransaction(purchase.signedTransaction)
        #expect(verified.payload.transactionId == purchase.transactionId)
        #expect(verified.payload.productId == "com.example.pro.yearly")
        #expect(verified.payload.price == 49990)
        #expect(verified.payload.expiresDate == SimulatorHarness.startMs + 365 * SimulatorHarness.dayMs)
    }

    @Test("a v2 refund notification verifies, nested transaction and renewal info included")
    func notification() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration(notificationVersions: [.v2]))
        let purchase = try await simulator.purchase(appleId: "w", productId: "com.example.pro.monthly")
        try await simulator.refund(transactionId: purchase.transactionId, reason: 1)
        let body = try #require(simulator.sentNotifications.last?.body)
        let verified = try await Self.verifier(simulator, environment: .sandbox, appAppleID: 1234)
            .verifyNotification(requestBody: Data(body.utf8))
        #expect(verified.payload.rawNotificationType == "REFUND")
        #expect(verified.transaction?.payload.transactionId == purchase.transactionId)
        #expect(verified.transaction?.payload.rawRevocationReason == 1)
        #expect(verified.renewalInfo?.payload.originalTransactionId == purchase.transactionId)
    }

    @Test("a JWS from another simulator's CA is refused")
    func foreignRoot() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let other = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let purchase = try await simulator.purchase(appleId: "x", productId: "com.example.removeads")
        await #expect(throws: AppStoreError.self) {
            _ = try await Self.verifier(other, environment: .sandbox).verifyTransaction(purchase.signedTransaction)
        }
    }
}
