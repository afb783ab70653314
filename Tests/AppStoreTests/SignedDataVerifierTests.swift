import AppStoreClient
import Foundation
import Primitives
import Testing
import X509

@testable import AppStore

@Suite("Signed data (JWS) verification")
struct SignedDataVerifierTests {
    func appleSignedNotification() throws -> Data {
        try Fixtures.data("notification-v2-test-signedPayload-apple-prod-chain-imdhemy.json")
    }

    func appleVerifier(bundleID: String, validationTime: SignedDataVerifier.ValidationTime) throws -> SignedDataVerifier {
        SignedDataVerifier(rootCertificates: [try AppleRootCertificates.appleRootCAG3], bundleID: bundleID,
                           environment: .sandbox, validationTime: validationTime, clock: .system)
    }

    @Test("the embedded Apple Root CA G3 is byte for byte the published certificate")
    func embeddedRoot() throws {
        #expect(AppleRootCertificates.appleRootCAG3DER == Array(try Fixtures.data("cert-AppleRootCA-G3-imdhemy.cer")))
        #expect(try AppleRootCertificates.appleRootCAG3 == Fixtures.appleRoot())
    }

    @Test("Apple's signed TEST notification verifies against Apple Root CA G3 at its signedDate")
    func appleNotificationAtSignedDate() async throws {
        let verified = try await appleVerifier(bundleID: "com.Abilities", validationTime: .signedDate)
            .verifyNotification(requestBody: try appleSignedNotification())
        #expect(verified.payload.notificationType == .test)
        #expect(verified.payload.notificationUUID == "5e09dcfc-205e-4ea1-9883-96676f394992")
        #expect(verified.payload.signedDate == 1_662_122_492_884)
        #expect(verified.payload.version == "2.0")
        #expect(verified.payload.data?.environment == .sandbox)
        #expect(verified.notification.validationTime == Date(timeIntervalSince1970: 1_662_122_492.884))
        #expect(verified.transaction == nil && verified.renewalInfo == nil)
    }

    @Test("Apple's signed TEST notification fails today: its leaf expired in 2023")
    func appleNotificationToday() async throws {
        let verifier = try appleVerifier(bundleID: "com.Abilities", validationTime: .now)
        let body = try appleSignedNotification()
        await expectError(.untrustedCertificateChain) {
            _ = try await verifier.verifyNotification(requestBody: body)
        }
    }

    @Test("Apple's signed renewal info verifies at its signedDate and fails today")
    func appleRenewalInfo() async throws {
        let jws = try Fixtures.text("jws-renewalinfo-apple-signed-sandbox-go-iap.jws")
        let verified = try await appleVerifier(bundleID: "any", validationTime: .signedDate).verifyRenewalInfo(jws)
        #expect(verified.payload.originalTransactionId == "2000000335310644")
        #expect(verified.payload.autoRenewProductId == "co.ringalarm.swtich.quarterly2")
        #expect(verified.payload.willAutoRenew == true)
        #expect(verified.payload.signedDate == 1_684_822_778_492)
        #expect(verified.payload.recentSubscriptionStartDate == 1_684_822_738_000)
        #expect(verified.payload.environment == .sandbox)
        let today = try appleVerifier(bundleID: "any", validationTime: .now)
        await expectError(.untrustedCertificateChain) { _ = try await today.verifyRenewalInfo(jws) }
    }

    @Test("an Apple-signed notification is not trusted when only the test root is")
    func wrongRoot() async throws {
        let verifier = SignedDataVerifier(rootCertificates: [try Fixtures.testRoot()], bundleID: "com.Abilities", environment: .sandbox, clock: .system)
        let body = try appleSignedNotification()
        await expectError(.untrustedCertificateChain) { _ = try await verifier.verifyNotification(requestBody: body) }
    }

    @Test("the test-CA TEST notification verifies for com.example in sandbox")
    func testCANotification() async throws {
        let verified = try await Fixtures.testCAVerifier()
            .verifyNotification(signedPayload: try Fixtures.text("notification-v2-test-signedPayload-testca-asslib.jws"))
        #expect(verified.payload.notificationType == .test)
        #expect(verified.payload.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(verified.payload.data?.appAppleId == 1234)
        #expect(verified.payload.data?.bundleId == "com.example")
        #expect(verified.payload.signedDate == 1_681_314_324_000)
    }

    @Test("the test-CA TEST notification is refused for production")
    func testCANotificationWrongEnvironment() async throws {
        let verifier = try Fixtures.testCAVerifier(environment: .production)
        let jws = try Fixtures.text("notification-v2-test-signedPayload-testca-asslib.jws")
        await expectError(.environmentMismatch) { _ = try await verifier.verifyNotification(signedPayload: jws) }
    }

    @Test("a validly signed notification for com.example.wrong fails with a bundle id mismatch")
    func wrongBundle() async throws {
        let verifier = try Fixtures.testCAVerifier()
        let jws = try Fixtures.text("notification-v2-wrong-bundle-id-testca-asslib.jws")
        let error = await #expect(throws: AppStoreError.self) { try await verifier.verifyNotification(signedPayload: jws) }
        #expect(error?.code == .bundleIDMismatch)
        #expect(error?.description.contains("com.example.wrong") == true)
    }

    @Test("a JWS without an x5c header fails with a missing certificate chain")
    func missingX5C() async throws {
        let verifier = try Fixtures.testCAVerifier()
        let jws = try Fixtures.text("notification-v2-missing-x5c-header-asslib.jws")
        await expectError(.missingCertificateChain) { _ = try await verifier.verifyNotification(signedPayload: jws) }
    }

    @Test("one flipped signature byte fails the signature check, and the error quotes no JWS")
    func flippedSignature() async throws {
        let jws = try Fixtures.text("notification-v2-test-signedPayload-testca-asslib.jws")
        var parts = jws.split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[10] ^= 0x01
        parts[2] = signature.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let verifier = try Fixtures.testCAVerifier()
        let error = await #expect(throws: AppStoreError.self) { try await verifier.verifyNotification(signedPayload: parts.joined(separator: ".")) }
        #expect(error?.code == .invalidSignature)
        #expect(error.map { !$0.debugDescription.contains(parts[2].prefix(20)) } == true)
    }

    @Test("a signed transaction verifies for com.example and is refused for com.example.x")
    func transaction() async throws {
        let jws = try Fixtures.text("jws-transaction-testca-asslib.jws")
        let verified = try await Fixtures.testCAVerifier().verifyTransaction(jws)
        #expect(verified.payload.bundleId == "com.example")
        #expect(verified.payload.environment == .sandbox)
        #expect(verified.payload.signedDate == 1_672_956_154_000)
        let other = try Fixtures.testCAVerifier(bundleID: "com.example.x")
        await expectError(.bundleIDMismatch) { _ = try await other.verifyTransaction(jws) }
    }

    @Test("a verifier of several apps accepts each app's signed data and refuses another's, naming the apps it serves")
    func severalApps() async throws {
        let jws = try Fixtures.text("jws-transaction-testca-asslib.jws")
        let both = SignedDataVerifier(
            rootCertificates: [try Fixtures.testRoot()], apps: ["com.example.x": nil, "com.example": 1234], environment: .sandbox, clock: .system)
        #expect(try await both.verifyTransaction(jws).payload.bundleId == "com.example")
        let others = SignedDataVerifier(
            rootCertificates: [try Fixtures.testRoot()], apps: ["com.example.x": nil, "com.example.y": 7], environment: .sandbox, clock: .system)
        let error = await #expect(throws: AppStoreError.self) { try await others.verifyTransaction(jws) }
        #expect(error?.code == .bundleIDMismatch)
        #expect(error?.description.contains("com.example.x or com.example.y") == true, "\(String(describing: error))")
    }

    @Test("signed renewal info verifies in sandbox and is refused for production")
    func renewalInfo() async throws {
        let jws = try Fixtures.text("jws-renewalinfo-testca-asslib.jws")
        let verified = try await Fixtures.testCAVerifier().verifyRenewalInfo(jws)
        #expect(verified.payload.environment == .sandbox)
        #expect(verified.payload.signedDate == 1_672_956_154_000)
        let production = try Fixtures.testCAVerifier(environment: .production)
        await expectError(.environmentMismatch) { _ = try await production.verifyRenewalInfo(jws) }
    }

    @Test("text that is not a JWS fails as an invalid format")
    func notAJWS() async throws {
        let verifier = try Fixtures.testCAVerifier()
        await expectError(.invalidJWSFormat) { _ = try await verifier.verifyTransaction("abc.def") }
        await expectError(.invalidJWSFormat) { _ = try await verifier.verifyTransaction("a.b.c") }
    }

    @Test("root certificates load from DER and PEM files, and APPLE_ROOT_CERTIFICATES adds them to G3")
    func loadRoots() throws {
        let der = Fixtures.directory.appendingPathComponent("cert-testCA-asslib.der").path
        let pem = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID()).pem")
        let body = try Fixtures.data("cert-testCA-asslib.der").base64EncodedString(options: .lineLength64Characters)
        try Data("-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n".utf8).write(to: pem)
        defer { try? FileManager.default.removeItem(at: pem) }
        let roots = try AppleRootCertificates.trusted(environment: ["APPLE_ROOT_CERTIFICATES": "\(der), \(pem.path)"])
        #expect(roots.count == 3)
        let testRoot = try Fixtures.testRoot()
        #expect(roots[1] == testRoot && roots[2] == testRoot)
        expectErrorNow(.invalidConfiguration) { _ = try AppleRootCertificates.load(paths: ["/nonexistent.der"]) }
    }

    @Test("root certificates parse from DER bytes in memory, and bytes that are not DER are a configuration error")
    func rootsFromDER() throws {
        let der = Array(try Fixtures.data("cert-testCA-asslib.der"))
        let roots = try AppleRootCertificates.certificates(der: [der, AppleRootCertificates.appleRootCAG3DER])
        #expect(roots == [try Fixtures.testRoot(), try Fixtures.appleRoot()])
        #expect(try AppleRootCertificates.certificates(der: []).isEmpty)
        expectErrorNow(.invalidConfiguration) { _ = try AppleRootCertificates.certificates(der: [der, [0x30, 0x03, 0x02]]) }
    }
}
