import Foundation
import JWTKit
import Synchronization

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

/// Mints the App Store Connect bearer token from the `.p8` key and keeps it until shortly
/// before it expires. The token is a credential: never logged or returned in an error, and
/// `description` says nothing of it.
final class AppStoreConnectToken: Sendable, CustomStringConvertible {
    static let audience = "appstoreconnect-v1"

    private let keys: JWTKeyCollection
    private let configuration: AppStoreConnectConfiguration
    /// The token and when it expires, in seconds since 1970.
    private let cached = Mutex<(token: String, expires: Int64)?>(nil)

    init(configuration: AppStoreConnectConfiguration) async throws {
        self.configuration = configuration
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: configuration.privateKeyPEM), kid: JWKIdentifier(string: configuration.keyId))
        self.keys = keys
    }

    /// A token valid for at least two more minutes after `nowMs` (milliseconds since 1970, UTC).
    func current(nowMs: Int64) async throws -> String {
        let issued = nowMs / 1000
        if let cached = cached.withLock({ $0 }), cached.expires - issued > 120 { return cached.token }
        let lifetime = configuration.tokenLifetime.components.seconds
        let claims = AppStoreConnectClaims(iss: configuration.issuerId, iat: issued, exp: issued + lifetime, aud: Self.audience)
        let token = try await keys.sign(claims, kid: JWKIdentifier(string: configuration.keyId))
        cached.withLock { $0 = (token, issued + lifetime) }
        return token
    }

    /// Forgets the cached token (after a 401, the next call signs afresh).
    func discard() {
        cached.withLock { $0 = nil }
    }

    var description: String { "AppStoreConnectToken(key id: \(configuration.keyId))" }
}
