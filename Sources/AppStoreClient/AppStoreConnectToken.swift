import Foundation
import JWTKit

/// The claims Apple requires of an App Store Connect API token (ES256, header `kid` and
/// `typ: JWT`): a team key's token carries no `bid`, and lives at most 20 minutes.
/// https://developer.apple.com/documentation/appstoreconnectapi/generating-tokens-for-api-requests
struct AppStoreConnectClaims: JWTPayload {
    var iss: String
    /// Seconds since 1970.
    var iat: Int64
    /// Seconds since 1970; at most 20 minutes after `iat`.
    var exp: Int64
    var aud: String

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The App Store Connect API's bearer token, renewed two minutes before it expires (it lives
/// 19 at most).
typealias AppStoreConnectToken = ES256Token<AppStoreConnectClaims>

extension ES256Token where Claims == AppStoreConnectClaims {
    static var audience: String { "appstoreconnect-v1" }

    convenience init(configuration: AppStoreConnectConfiguration) async throws {
        try await self.init(
            privateKeyPEM: configuration.privateKeyPEM, keyId: configuration.keyId, lifetime: configuration.tokenLifetime,
            renewBefore: .seconds(120), name: "AppStoreConnectToken"
        ) { issued, expires in
            AppStoreConnectClaims(iss: configuration.issuerId, iat: issued, exp: expires, aud: AppStoreConnectToken.audience)
        }
    }
}
