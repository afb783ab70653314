import AppStore
import Foundation
import Primitives
import X509

/// Verifies signed data from either App Store environment: the payload's own `environment`
/// picks the verifier (production or sandbox), which then checks everything, that field included.
public struct SignedDataVerifiers: Sendable {
    let production: SignedDataVerifier
    let sandbox: SignedDataVerifier

    /// `clock` dates the check of a payload that carries no `signedDate` (the ledger's clock).
    public init(rootCertificates: [Certificate], bundleId: String, appAppleId: Int64? = nil, clock: WallClock) {
        self.init(rootCertificates: rootCertificates, apps: [bundleId: appAppleId], clock: clock)
    }

    /// Every app the ledger serves, by bundle id, with its Apple id when configured.
    public init(rootCertificates: [Certificate], apps: [String: Int64?], clock: WallClock) {
        production = SignedDataVerifier(rootCertificates: rootCertificates, apps: apps, environment: .production, clock: clock)
        sandbox = SignedDataVerifier(rootCertificates: rootCertificates, apps: apps, environment: .sandbox, clock: clock)
    }

    /// The verifiers of every app in `apps`.
    public init(rootCertificates: [Certificate], apps: LedgerApps, clock: WallClock) {
        self.init(
            rootCertificates: rootCertificates,
            apps: Dictionary(apps.apps.map { ($0.bundleId, $0.appAppleId) }, uniquingKeysWith: { first, _ in first }), clock: clock)
    }

    public func verifyTransaction(_ jws: String) async throws(AppStoreError) -> Verified<SignedTransaction> {
        try await verifier(for: jws).verifyTransaction(jws)
    }

    public func verifyNotification(signedPayload: String) async throws(AppStoreError) -> VerifiedNotification {
        try await verifier(for: signedPayload).verifyNotification(signedPayload: signedPayload)
    }

    /// The signature, chain and addressee of a notification, reading only its envelope: for one
    /// whose content `verifyNotification` found unreadable (`.unreadablePayload`).
    public func verifyNotificationEnvelope(signedPayload: String) async throws(AppStoreError) -> Verified<NotificationEnvelope> {
        try await verifier(for: signedPayload).verifyNotificationEnvelope(signedPayload: signedPayload)
    }

    public func verifyRenewalInfo(_ jws: String) async throws(AppStoreError) -> Verified<SignedRenewalInfo> {
        try await verifier(for: jws).verifyRenewalInfo(jws)
    }

    /// The verifier of the environment the payload claims; that verifier checks the claim.
    private func verifier(for jws: String) -> SignedDataVerifier {
        SignedDataVerifier.claimedEnvironment(of: jws) == .sandbox ? sandbox : production
    }
}
