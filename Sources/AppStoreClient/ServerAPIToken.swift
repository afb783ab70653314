import Foundation
import JWTKit

/// The claims Apple requires of a Server API token (ES256, header `kid` and `typ: JWT`).
/// https://developer.apple.com/documentation/appstoreserverapi/generating_json_web_tokens_for_api_requests
struct ServerAPIClaims: JWTPayload {
    var iss: String
    /// Seconds since 1970.
    var iat: Int64
    /// Seconds since 1970; at most 60 minutes after `iat`.
    var exp: Int64
    var aud: String
    var bid: String

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The Server API's bearer token, renewed five minutes before it expires.
typealias ServerAPIToken = ES256Token<ServerAPIClaims>

extension ES256Token where Claims == ServerAPIClaims {
    convenience init(configuration: ServerAPIConfiguration) async throws {
        try await self.init(
            privateKeyPEM: configuration.privateKeyPEM, keyId: configuration.keyId, lifetime: configuration.tokenLifetime,
            renewBefore: .seconds(300), name: "ServerAPIToken"
        ) { issued, expires in
            ServerAPIClaims(iss: configuration.issuerId, iat: issued, exp: expires, aud: "appstoreconnect-v1", bid: configuration.bundleId)
        }
    }
}
