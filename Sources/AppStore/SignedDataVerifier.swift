import Crypto
import Foundation
import Logging
import Primitives
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Store signed data (JWS): v2 notifications, signed transactions (StoreKit 2
/// `jwsRepresentation`) and signed renewal info.
///
/// A payload is accepted when: the header says ES256 and carries an `x5c` chain; the leaf and
/// intermediate chain to one of `rootCertificates` under RFC 5280 and Apple's OID policy
/// (`AppleCertificatePolicy`) at the validation time; the ES256 signature verifies with the leaf's
/// key; and the bundle id and environment are ours (for a notification, from whichever block
/// names its app: `NotificationAddressee`). The signature is checked before the payload is read
/// as a model, so a payload Apple signed in a shape this build does not read fails as
/// `.unreadablePayload`, never as a bad signature. All cryptography is swift-crypto's and
/// swift-certificates'. Errors never quote the JWS.
/// https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2
public struct SignedDataVerifier: Sendable {
    /// When the certificate chain must have been valid.
    public enum ValidationTime: Hashable, Sendable {
        /// At the payload's `signedDate` (the clock's now when it has none), as Apple's library
        /// does offline: a notification signed in 2022 stays verifiable after its leaf expired.
        case signedDate
        /// At the time of verification, as the verifier's clock reads it.
        case now
        /// At a given instant.
        case fixed(Date)
    }

    public let rootCertificates: [Certificate]
    /// The apps whose signed data this verifier accepts, by bundle id, each with its Apple id
    /// when known: one ledger may serve several apps of a developer account.
    public let apps: [String: Int64?]
    public let environment: AppStoreEnvironment
    public let validationTime: ValidationTime
    /// What `.now`, and `.signedDate` for a payload without one, read: this module reads no
    /// clock of its own.
    public let clock: WallClock
    private let logger: Logger

    /// One app's verifier. `appAppleID`, when set, is checked on production notifications
    /// only, as Apple's library does: sandbox notifications may lack it, and signed transactions
    /// and renewal infos never carry it.
    public init(
        rootCertificates: [Certificate],
        bundleID: String,
        environment: AppStoreEnvironment,
        appAppleID: Int64? = nil,
        validationTime: ValidationTime = .signedDate,
        clock: WallClock,
        logger: Logger = Logger(label: "AppStore.SignedDataVerifier")
    ) {
        self.init(
            rootCertificates: rootCertificates, apps: [bundleID: appAppleID], environment: environment, validationTime: validationTime,
            clock: clock, logger: logger)
    }

    /// A verifier of several apps' signed data, each checked against its own Apple id.
    public init(
        rootCertificates: [Certificate],
        apps: [String: Int64?],
        environment: AppStoreEnvironment,
        validationTime: ValidationTime = .signedDate,
        clock: WallClock,
        logger: Logger = Logger(label: "AppStore.SignedDataVerifier")
    ) {
        self.rootCertificates = rootCertificates
        self.apps = apps
        self.environment = environment
        self.validationTime = validationTime
        self.clock = clock
        self.logger = logger
    }

    /// Verifies the body Apple POSTs to the notification URL, `{"signedPayload": "..."}`.
    public func verifyNotification(requestBody: Data) async throws(AppStoreError) -> VerifiedNotification {
        struct Body: Decodable { var signedPayload: String }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: requestBody)
        } catch {
            throw AppStoreError.malformedBody("notification body", error)
        }
        return try await verifyNotification(signedPayload: body.signedPayload)
    }

    /// Verifies a v2 notification's `signedPayload`, and its nested transaction and renewal info.
    /// A notification whose signature and addressee verify but whose content (or a nested
    /// payload) this build cannot read throws `.unreadablePayload`; `verifyNotificationEnvelope`
    /// still reads what it says of itself.
    public func verifyNotification(signedPayload: String) async throws(AppStoreError) -> VerifiedNotification {
        let envelope = try await verifyNotificationEnvelope(signedPayload: signedPayload)
        let payload = try Self.decode(NotificationV2Payload.self, from: envelope.payloadBytes, what: "the notification")
        let verified = Verified(payload: payload, payloadBytes: envelope.payloadBytes, validationTime: envelope.validationTime)
        let transaction = try await payload.data?.signedTransactionInfo.asyncMap { jws async throws(AppStoreError) in
            try await verifyTransaction(jws)
        }
        let renewalInfo = try await payload.data?.signedRenewalInfo.asyncMap { jws async throws(AppStoreError) in
            try await verifyRenewalInfo(jws)
        }
        return VerifiedNotification(notification: verified, transaction: transaction, renewalInfo: renewalInfo)
    }

    /// Verifies a v2 notification's signature, chain and addressee (bundle id, app Apple id in
    /// production, environment) reading only its envelope, which never refuses a field: what
    /// can be recorded of a notification Apple signed for this app in a shape this build does
    /// not read. Nested payloads are not verified.
    public func verifyNotificationEnvelope(signedPayload: String) async throws(AppStoreError) -> Verified<NotificationEnvelope> {
        let verified = try await verify(signedPayload, as: NotificationEnvelope.self)
        let addressee = verified.payload.addressee
        try check(bundle: addressee.bundleId)
        try check(appAppleID: addressee.appAppleId, of: addressee.bundleId)
        try check(environment: addressee.rawEnvironment)
        return verified
    }

    /// Verifies a signed transaction: a notification's `signedTransactionInfo`, or a StoreKit 2
    /// `jwsRepresentation` the app sends (`POST /v1/transactions`).
    public func verifyTransaction(_ jws: String) async throws(AppStoreError) -> Verified<SignedTransaction> {
        let verified = try await verify(jws, as: SignedTransaction.self)
        try check(bundle: verified.payload.bundleId)
        try check(environment: verified.payload.rawEnvironment)
        return verified
    }

    /// Verifies signed renewal info; it names no bundle, so only the environment is checked.
    public func verifyRenewalInfo(_ jws: String) async throws(AppStoreError) -> Verified<SignedRenewalInfo> {
        let verified = try await verify(jws, as: SignedRenewalInfo.self)
        try check(environment: verified.payload.rawEnvironment)
        return verified
    }

    // MARK: - The checks

    /// Checks the header, chain and signature, then reads the payload as `type`.
    private func verify<Payload: Decodable & Sendable>(_ jws: String, as type: Payload.Type) async throws(AppStoreError) -> Verified<Payload> {
        let token = try CompactJWS(jws)
        guard token.header.alg == "ES256" else {
            throw AppStoreError(.invalidJWSFormat, "JWS algorithm is not ES256")
        }
        guard let x5c = token.header.x5c, !x5c.isEmpty else {
            throw AppStoreError(.missingCertificateChain, "JWS header has no x5c certificate chain")
        }
        guard x5c.count == 3 else {
            throw AppStoreError(.missingCertificateChain, "x5c holds \(x5c.count) certificates, Apple sends leaf, intermediate and root")
        }
        // Like Apple's ChainVerifier, only the leaf and intermediate are taken from x5c: the root
        // must be one we trust, whatever x5c[2] says.
        let leaf = try Self.certificate(x5c[0])
        let intermediate = try Self.certificate(x5c[1])
        let time = instant(signedDate: SignedDate.of(token.payload))
        var verifier = Verifier(rootCertificates: CertificateStore(rootCertificates)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleCertificatePolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate = result else {
            var reasons = ""
            if case .couldNotValidate(let failures) = result {
                reasons = failures.map { "\($0.policyFailureReason)" }.joined(separator: "; ")
            }
            logger.info("signed data chain rejected", metadata: ["validation_time": "\(time)", "reasons": "\(reasons)"])
            throw AppStoreError(
                .untrustedCertificateChain, "x5c does not chain to a trusted root at \(time.formatted(.iso8601))",
                underlying: reasons.isEmpty ? "no path to a trusted root" : reasons)
        }
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AppStoreError(.invalidCertificate, "the leaf certificate's key is not P-256")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
              key.isValidSignature(signature, for: token.signingInput)
        else {
            throw AppStoreError(.invalidSignature, "the ES256 signature does not verify")
        }
        let payload = try Self.decode(Payload.self, from: token.payload, what: "the signed payload")
        return Verified(payload: payload, payloadBytes: token.payload, validationTime: time)
    }

    /// Reads verified payload bytes as `type`; a shape it refuses is `.unreadablePayload`.
    private static func decode<T: Decodable>(_ type: T.Type, from bytes: Data, what: String) throws(AppStoreError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: bytes)
        } catch {
            throw AppStoreError.unreadablePayload(what, error)
        }
    }

    /// The `signedDate` of a payload, read before anything else is, to date the chain check;
    /// nil when it has none or the payload is not a JSON object (the check is then at now).
    private struct SignedDate: Decodable {
        var value: Int64?

        init(from decoder: any Decoder) throws {
            value = try decoder.container(keyedBy: AnyKey.self).decodeMillisecondsIfPresent(forKey: AnyKey("signedDate"))
        }

        static func of(_ payload: Data) -> Int64? {
            (try? JSONDecoder().decode(SignedDate.self, from: payload))?.value
        }
    }

    private func check(bundle: String?) throws(AppStoreError) {
        guard let bundle, apps[bundle] != nil else {
            throw AppStoreError(
                .bundleIDMismatch, "signed data is for bundle \(bundle ?? "none that can be read"), not \(apps.keys.sorted().joined(separator: " or "))")
        }
    }

    /// A notification's `appAppleId`, against its bundle's; only notifications name it (Apple's
    /// `verifyNotification`).
    private func check(appAppleID: Int64?, of bundle: String?) throws(AppStoreError) {
        if environment == .production, let bundle, let expected = apps[bundle] ?? nil, appAppleID != expected {
            throw AppStoreError(.bundleIDMismatch, "signed data is for app \(appAppleID.map(String.init) ?? "none"), not \(expected)")
        }
    }

    private func check(environment raw: String?) throws(AppStoreError) {
        guard raw.flatMap(AppStoreEnvironment.init(appleValue:)) == environment else {
            throw AppStoreError(.environmentMismatch, "signed data is for environment \(raw ?? "none"), not \(environment.rawValue)")
        }
    }

    private static func certificate(_ base64: String) throws(AppStoreError) -> Certificate {
        guard let der = Data(base64Encoded: base64) else {
            throw AppStoreError(.invalidCertificate, "an x5c certificate is not base64")
        }
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            throw AppStoreError(.invalidCertificate, "an x5c certificate is not DER", underlying: "\(error)")
        }
    }

    /// When the chain must have been valid, for a payload signed at `signedDate`.
    private func instant(signedDate: Int64?) -> Date {
        func at(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        switch validationTime {
        case .now: return at(clock())
        case .fixed(let date): return date
        case .signedDate: return at(signedDate ?? clock())
        }
    }
}

extension Optional {
    /// `map` for an async, typed-throwing transform.
    fileprivate func asyncMap<U>(_ transform: (Wrapped) async throws(AppStoreError) -> U) async throws(AppStoreError) -> U? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
