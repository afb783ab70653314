import Crypto
import Foundation
import Logging
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Store signed data (JWS): v2 notifications, signed transactions (StoreKit 2
/// `jwsRepresentation`) and signed renewal info.
///
/// A payload is accepted when: the header says ES256 and carries an `x5c` chain; the leaf and
/// intermediate chain to one of `rootCertificates` under RFC 5280 and Apple's OID policy
/// (`AppleCertificatePolicy`) at the validation time; the ES256 signature verifies with the leaf's
/// key; and the bundle id and environment are ours. All cryptography is swift-crypto's and
/// swift-certificates'. Errors never quote the JWS.
/// https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2
public struct SignedDataVerifier: Sendable {
    /// When the certificate chain must have been valid.
    public enum ValidationTime: Hashable, Sendable {
        /// At the payload's `signedDate` (now when it has none), as Apple's library does offline:
        /// a notification signed in 2022 stays verifiable after its leaf expired.
        case signedDate
        /// At the time of verification.
        case now
        /// At a given instant.
        case fixed(Date)
    }

    public let rootCertificates: [Certificate]
    public let bundleID: String
    public let environment: AppStoreEnvironment
    /// The app's Apple id; when set, checked on production notifications only, as Apple's library
    /// does: sandbox notifications may lack it, and signed transactions and renewal infos never
    /// carry it.
    public let appAppleID: Int64?
    public let validationTime: ValidationTime
    private let logger: Logger

    public init(
        rootCertificates: [Certificate],
        bundleID: String,
        environment: AppStoreEnvironment,
        appAppleID: Int64? = nil,
        validationTime: ValidationTime = .signedDate,
        logger: Logger = Logger(label: "AppStore.SignedDataVerifier")
    ) {
        self.rootCertificates = rootCertificates
        self.bundleID = bundleID
        self.environment = environment
        self.appAppleID = appAppleID
        self.validationTime = validationTime
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
    public func verifyNotification(signedPayload: String) async throws(AppStoreError) -> VerifiedNotification {
        let verified = try await verify(signedPayload, as: NotificationV2Payload.self, signedDate: \.signedDate)
        let payload = verified.payload
        let bundle = payload.data?.bundleId ?? payload.summary?.bundleId
        let appAppleID = payload.data?.appAppleId ?? payload.summary?.appAppleId
        let environment = payload.data?.rawEnvironment ?? payload.summary?.rawEnvironment
        try check(bundle: bundle)
        try check(appAppleID: appAppleID)
        try check(environment: environment)
        let transaction = try await payload.data?.signedTransactionInfo.asyncMap { jws async throws(AppStoreError) in
            try await verifyTransaction(jws)
        }
        let renewalInfo = try await payload.data?.signedRenewalInfo.asyncMap { jws async throws(AppStoreError) in
            try await verifyRenewalInfo(jws)
        }
        return VerifiedNotification(notification: verified, transaction: transaction, renewalInfo: renewalInfo)
    }

    /// Verifies a signed transaction: a notification's `signedTransactionInfo`, or a StoreKit 2
    /// `jwsRepresentation` the app sends (`POST /v1/transactions`).
    public func verifyTransaction(_ jws: String) async throws(AppStoreError) -> Verified<SignedTransaction> {
        let verified = try await verify(jws, as: SignedTransaction.self, signedDate: \.signedDate)
        try check(bundle: verified.payload.bundleId)
        try check(environment: verified.payload.rawEnvironment)
        return verified
    }

    /// Verifies signed renewal info; it names no bundle, so only the environment is checked.
    public func verifyRenewalInfo(_ jws: String) async throws(AppStoreError) -> Verified<SignedRenewalInfo> {
        let verified = try await verify(jws, as: SignedRenewalInfo.self, signedDate: \.signedDate)
        try check(environment: verified.payload.rawEnvironment)
        return verified
    }

    // MARK: - The checks

    private func verify<Payload: Decodable & Sendable>(
        _ jws: String, as type: Payload.Type, signedDate: KeyPath<Payload, Int64?>
    ) async throws(AppStoreError) -> Verified<Payload> {
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
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: token.payload)
        } catch {
            throw AppStoreError(.invalidJWSFormat, "JWS payload is not the expected JSON")
        }
        // Like Apple's ChainVerifier, only the leaf and intermediate are taken from x5c: the root
        // must be one we trust, whatever x5c[2] says.
        let leaf = try Self.certificate(x5c[0])
        let intermediate = try Self.certificate(x5c[1])
        let time = Self.instant(validationTime, signedDate: payload[keyPath: signedDate])
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
        return Verified(payload: payload, payloadBytes: token.payload, validationTime: time)
    }

    private func check(bundle: String?) throws(AppStoreError) {
        guard bundle == bundleID else {
            throw AppStoreError(.bundleIDMismatch, "signed data is for bundle \(bundle ?? "none"), not \(bundleID)")
        }
    }

    /// A notification's `appAppleId`; only notifications name it (Apple's `verifyNotification`).
    private func check(appAppleID: Int64?) throws(AppStoreError) {
        if environment == .production, let expected = self.appAppleID, appAppleID != expected {
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

    private static func instant(_ time: ValidationTime, signedDate: Int64?) -> Date {
        switch time {
        case .now: return Date()
        case .fixed(let date): return date
        case .signedDate:
            return signedDate.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date()
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
