import Foundation
import JWTKit
import Synchronization

/// Mints an ES256 bearer token from a `.p8` key (header `kid`) and keeps it until shortly before
/// it expires, so a burst of calls signs once: what the App Store Server API's and App Store
/// Connect API's tokens share (`AppleAPIToken`).
/// The token is a credential: never logged or returned in an error, and `description` says
/// nothing of it.
final class ES256Token<Claims: JWTPayload>: Sendable, CustomStringConvertible {
    private let keys: JWTKeyCollection
    private let keyId: String
    private let lifetimeSeconds: Int64
    /// A cached token closer than this to its expiry is signed anew.
    private let renewBeforeSeconds: Int64
    private let claims: @Sendable (_ issued: Int64, _ expires: Int64) -> Claims
    private let name: String
    /// The token and when it expires, in seconds since 1970.
    private let cached = Mutex<(token: String, expires: Int64)?>(nil)

    /// Signs with `access`'s key, for `access.tokenLifetime`.
    init(
        access: AppleAPIAccess, renewBefore: Duration, name: String,
        claims: @escaping @Sendable (_ issued: Int64, _ expires: Int64) -> Claims
    ) async throws {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: access.privateKeyPEM), kid: JWKIdentifier(string: access.keyId))
        self.keys = keys
        self.keyId = access.keyId
        self.lifetimeSeconds = access.tokenLifetime.components.seconds
        self.renewBeforeSeconds = renewBefore.components.seconds
        self.name = name
        self.claims = claims
    }

    /// A token valid for at least `renewBefore` more after `nowMs` (milliseconds since 1970, UTC).
    func current(nowMs: Int64) async throws -> String {
        let issued = nowMs / 1000
        if let cached = cached.withLock({ $0 }), cached.expires - issued > renewBeforeSeconds { return cached.token }
        let token = try await keys.sign(claims(issued, issued + lifetimeSeconds), kid: JWKIdentifier(string: keyId))
        cached.withLock { $0 = (token, issued + lifetimeSeconds) }
        return token
    }

    /// Forgets the cached token (after a 401, the next call signs afresh).
    func discard() {
        cached.withLock { $0 = nil }
    }

    var description: String { "\(name)(key id: \(keyId))" }
}
