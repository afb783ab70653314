import AppStore
import AppStoreClient
import AppleSimulator
import Foundation
import Testing

/// The simulator's JWS through the AppStore module's verifier, trusting the simulator's root
/// (the DER the ledger would read from a file named in `APPLE_ROOT_CERTIFICATES`).
@Suite("the simulator's signatures verify with the AppStore verifier")
struct SignatureVerificationTests {
    /// `appAppleID` is checked on production notifications only: a transaction's payload carries
    /// no `appAppleId` (as in Apple's library).
    static func verifier(
        _ simulator: AppleSimulator, environment: AppStoreEnvironment, appAppleID: Int64? = nil
    ) throws -> SignedDataVerifier {
        let roots = try AppleRootCertificates.certificates(der: [simulator.rootCertificateDER])
        return SignedDataVerifier(
            rootCertificates: roots, bundleID: "com.example.app", environment: environment, appAppleID: appAppleID, clock: .system)
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

    @Test("a production signed transaction verifies when the verifier knows the app's Apple id")
    func productionTransactionWithAppAppleID() async throws {
        // A transaction's payload carries no appAppleId; Apple's library checks it on
        // notifications only, so setting it must not refuse every production transaction.
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let purchase = try await simulator.purchase(
            appleId: "y", productId: "com.example.removeads", environment: .production)
        let verified = try await Self.verifier(simulator, environment: .production, appAppleID: 1234)
            .verifyTransaction(purchase.signedTransaction)
        #expect(verified.payload.transactionId == purchase.transactionId)
        #expect(verified.payload.environment == .production)
    }

    @Test("a production v2 notification is checked against the app's Apple id, its nested transaction too")
    func productionNotificationWithAppAppleID() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration(notificationVersions: [.v2]))
        let purchase = try await simulator.purchase(
            appleId: "z", productId: "com.example.pro.monthly", environment: .production)
        try await simulator.refund(transactionId: purchase.transactionId, reason: 0)
        let body = Data(try #require(simulator.sentNotifications.last?.body).utf8)
        let verified = try await Self.verifier(simulator, environment: .production, appAppleID: 1234)
            .verifyNotification(requestBody: body)
        #expect(verified.payload.data?.appAppleId == 1234)
        #expect(verified.transaction?.payload.transactionId == purchase.transactionId)
        let otherApp = try Self.verifier(simulator, environment: .production, appAppleID: 999)
        let error = await #expect(throws: AppStoreError.self) { try await otherApp.verifyNotification(requestBody: body) }
        #expect(error?.code == .bundleIDMismatch)
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
