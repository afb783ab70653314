import AppStore
import Foundation
import X509

/// Verifies signed data from either App Store environment: the payload's own `environment`
/// picks the verifier (production or sandbox), which then checks everything, that field included.
public struct SignedDataVerifiers: Sendable {
    let production: SignedDataVerifier
    let sandbox: SignedDataVerifier

    public init(rootCertificates: [Certificate], bundleId: String, appAppleId: Int64? = nil) {
        production = SignedDataVerifier(rootCertificates: rootCertificates, bundleID: bundleId, environment: .production, appAppleID: appAppleId)
        sandbox = SignedDataVerifier(rootCertificates: rootCertificates, bundleID: bundleId, environment: .sandbox, appAppleID: appAppleId)
    }

    public func verifyTransaction(_ jws: String) async throws(AppStoreError) -> Verified<SignedTransaction> {
        try await verifier(for: jws).verifyTransaction(jws)
    }

    public func verifyNotification(signedPayload: String) async throws(AppStoreError) -> VerifiedNotification {
        try await verifier(for: signedPayload).verifyNotification(signedPayload: signedPayload)
    }

    /// Reads, without trusting it, the environment the payload claims (`environment`, or
    /// `data.environment` in a notification). The chosen verifier checks it again.
    private func verifier(for jws: String) -> SignedDataVerifier {
        struct Claims: Decodable {
            struct Inner: Decodable { var environment: String? }
            var environment: String?
            var data: Inner?
            var summary: Inner?
        }
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Self.base64URLDecode(String(parts[1])),
              let claims = try? JSONDecoder().decode(Claims.self, from: payload)
        else { return production }
        let claimed = claims.environment ?? claims.data?.environment ?? claims.summary?.environment
        return claimed.flatMap(AppStoreEnvironment.init(appleValue:)) == .sandbox ? sandbox : production
    }

    static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
