import Foundation
import JWTKit
import Synchronization

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

/// Mints the bearer token from the `.p8` key and keeps it until shortly before it expires, so
/// a burst of calls signs once. The token is a credential: it is never logged or returned in an
/// error, and this type's `description` says nothing of it.
final class ServerAPIToken: Sendable, CustomStringConvertible {
    private let keys: JWTKeyCollection
    private let configuration: ServerAPIConfiguration
    /// The token and when it expires, in seconds since 1970.
    private let cached = Mutex<(token: String, expires: Int64)?>(nil)

    init(configuration: ServerAPIConfiguration) async throws {
        self.configuration = configuration
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: configuration.privateKeyPEM), kid: JWKIdentifier(string: configuration.keyId))
        self.keys = keys
    }

    /// A token valid for at least five more minutes after `nowMs` (milliseconds since 1970, UTC).
    func current(nowMs: Int64) async throws -> String {
        let issued = nowMs / 1000
        if let cached = cached.withLock({ $0 }), cached.expires - issued > 300 { return cached.token }
        let lifetime = configuration.tokenLifetime.components.seconds
        let claims = ServerAPIClaims(
            iss: configuration.issuerId, iat: issued, exp: issued + lifetime, aud: "appstoreconnect-v1", bid: configuration.bundleId)
        let token = try await keys.sign(claims, kid: JWKIdentifier(string: configuration.keyId))
        cached.withLock { $0 = (token, issued + lifetime) }
        return token
    }

    /// Forgets the cached token (after a 401, the next call signs afresh).
    func discard() {
        cached.withLock { $0 = nil }
    }

    var description: String { "ServerAPIToken(key id: \(configuration.keyId))" }
}
