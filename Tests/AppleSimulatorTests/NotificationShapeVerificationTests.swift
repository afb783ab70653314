import AppStore
import AppStoreClient
import AppleSimulator
import Foundation
import Primitives
import Testing

/// Payloads in shapes the simulator does not send on its own, signed byte for byte by its CA and
/// verified as the ledger verifies them: the addressee from whichever block names the app, and
/// a shape that cannot be read told apart from a bad signature.
@Suite("Signed notifications of every shape verify by the block that names their app")
struct NotificationShapeVerificationTests {
    static let signedAt = SimulatorHarness.startMs

    static func sign(_ simulator: AppleSimulator, _ json: String) throws -> String {
        try simulator.certificateAuthority.sign(payloadJSON: Data(json.utf8))
    }

    static func externalPurchaseToken(id: String, bundle: String = "com.example.app") -> String {
        #"{"notificationType":"EXTERNAL_PURCHASE_TOKEN","subtype":"UNREPORTED","notificationUUID":"6a3a9f0e-1b1f-4c55-9d43-0a3e8a1c2b01","version":"2.0","signedDate":\#(signedAt),"externalPurchaseToken":{"externalPurchaseId":"\#(id)","tokenCreationDate":\#(signedAt + 50),"appAppleId":1234,"bundleId":"\#(bundle)"}}"#
    }

    @Test("EXTERNAL_PURCHASE_TOKEN: a SANDBOX_ token id is sandbox, any other production, as Apple's libraries read it")
    func externalPurchaseToken() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let sandbox = try Self.sign(simulator, Self.externalPurchaseToken(id: "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e"))
        let verified = try await SignatureVerificationTests.verifier(simulator, environment: .sandbox).verifyNotification(signedPayload: sandbox)
        #expect(verified.payload.notificationType == .externalPurchaseToken)
        #expect(verified.payload.addressee.block == .externalPurchaseToken)
        #expect(verified.payload.addressee.environment == .sandbox)
        #expect(verified.transaction == nil)
        #expect(SignedDataVerifier.claimedEnvironment(of: sandbox) == .sandbox)
        await expectCode(.environmentMismatch) {
            _ = try await SignatureVerificationTests.verifier(simulator, environment: .production).verifyNotification(signedPayload: sandbox)
        }
        let production = try Self.sign(simulator, Self.externalPurchaseToken(id: "b2158121-7af9-49d4-9561-1f588205523e"))
        let inProduction = try await SignatureVerificationTests.verifier(simulator, environment: .production, appAppleID: 1234)
            .verifyNotification(signedPayload: production)
        #expect(inProduction.payload.addressee.rawEnvironment == "Production")
        // The app's Apple id in production comes from the token block too.
        await expectCode(.bundleIDMismatch) {
            _ = try await SignatureVerificationTests.verifier(simulator, environment: .production, appAppleID: 999).verifyNotification(signedPayload: production)
        }
        let otherApp = try Self.sign(simulator, Self.externalPurchaseToken(id: "SANDBOX_1", bundle: "com.example.other"))
        await expectCode(.bundleIDMismatch) {
            _ = try await SignatureVerificationTests.verifier(simulator, environment: .sandbox).verifyNotification(signedPayload: otherApp)
        }
    }

    @Test("RESCIND_CONSENT: appData names the app in place of data")
    func rescindConsent() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let jws = try Self.sign(simulator, #"{"notificationType":"RESCIND_CONSENT","notificationUUID":"7b4b0a1f-2c20-4d66-8e54-1b4f9b2d3c12","appData":{"appAppleId":1234,"bundleId":"com.example.app","environment":"Sandbox","signedAppTransactionInfo":"signed_app_transaction_info_value"},"version":"2.0","signedDate":\#(Self.signedAt)}"#)
        let verified = try await SignatureVerificationTests.verifier(simulator, environment: .sandbox).verifyNotification(signedPayload: jws)
        #expect(verified.payload.notificationType == .rescindConsent)
        #expect(verified.payload.addressee.block == .appData)
        #expect(verified.payload.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }

    @Test("a payload whose signature verifies but whose shape is refused is unreadable, never a bad signature")
    func unreadableIsNotForged() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let verifier = try SignatureVerificationTests.verifier(simulator, environment: .sandbox)
        let refused = #"{"notificationType":"DID_RENEW","notificationUUID":"8c5c1b20-3d31-4e77-9f65-2c5a0c3e4d23","data":{"appAppleId":1234,"bundleId":"com.example.app","environment":"Sandbox","status":"ACTIVE"},"version":"2.0","signedDate":\#(Self.signedAt)}"#
        let jws = try Self.sign(simulator, refused)
        let error = await #expect(throws: AppStoreError.self) { try await verifier.verifyNotification(signedPayload: jws) }
        #expect(error?.code == .unreadablePayload)
        #expect(error?.underlying?.contains("status") == true)
        // What it says of itself is still read, signature and app checked.
        let envelope = try await verifier.verifyNotificationEnvelope(signedPayload: jws)
        #expect(envelope.payload.rawNotificationType == "DID_RENEW")
        #expect(envelope.payload.notificationUUID == "8c5c1b20-3d31-4e77-9f65-2c5a0c3e4d23")
        #expect(envelope.validationTime == Date(timeIntervalSince1970: Double(Self.signedAt) / 1000))
        // The same bytes with a flipped signature are a bad signature: the signature is checked first.
        var parts = jws.split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[5] ^= 0x01
        parts[2] = Base64URL.encode(signature)
        await expectCode(.invalidSignature) { _ = try await verifier.verifyNotification(signedPayload: parts.joined(separator: ".")) }
        // A signed transaction in a refused shape (a fractional quantity) is unreadable too.
        let transaction = try Self.sign(simulator, #"{"transactionId":"1","bundleId":"com.example.app","environment":"Sandbox","quantity":1.5,"signedDate":\#(Self.signedAt)}"#)
        await expectCode(.unreadablePayload) { _ = try await verifier.verifyTransaction(transaction) }
    }

    @Test("a signedDate with a fraction of a millisecond is read, and the chain is checked at it rounded down")
    func fractionalSignedDate() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let jws = try Self.sign(simulator, #"{"notificationType":"TEST","notificationUUID":"9d6d2c31-4e42-4f88-a076-3d6b1d4f5e34","data":{"appAppleId":1234,"bundleId":"com.example.app","environment":"Sandbox"},"version":"2.0","signedDate":\#(Self.signedAt).5}"#)
        let verified = try await SignatureVerificationTests.verifier(simulator, environment: .sandbox).verifyNotification(signedPayload: jws)
        #expect(verified.payload.signedDate == Self.signedAt)
        #expect(verified.notification.validationTime == Date(timeIntervalSince1970: Double(Self.signedAt) / 1000))
    }
}

/// Expects `body` to throw an `AppStoreError` with `code`.
private func expectCode(_ code: AppStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as AppStoreError {
        #expect(error.code == code, "\(error.debugDescription)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
