import Foundation
import JWTKit

/// Checks the `Authorization: Bearer` JWT of an App Store Connect API request (the price
/// points) as Apple does; a different key and different rules from the Server API's:
/// header `alg` ES256 and `kid` (the configured `connectKeyId`, when one is); ES256 signature by
/// the configured `connectPublicKeyPEM`; claims `iss` (the configured `connectIssuerId`, when
/// one is), `aud` = "appstoreconnect-v1", `iat` at most 60 s ahead of the wall clock, `exp` still
/// ahead and at most 20 minutes after `iat`, and NO `bid` (a Server API token is refused here).
/// See https://developer.apple.com/documentation/appstoreconnectapi/generating-tokens-for-api-requests
struct ConnectAPITokenVerifier: Sendable {
    /// The longest lifetime (`exp` - `iat`) App Store Connect accepts.
    static let maximumLifetime: TimeInterval = 20 * 60

    typealias Refusal = ServerAPITokenVerifier.Refusal

    let keyId: String?
    let issuerId: String?
    let key: ES256PublicKey

    init(publicKeyPEM: String, keyId: String?, issuerId: String?) throws {
        self.keyId = keyId
        self.issuerId = issuerId
        do {
            key = try ES256PublicKey(pem: publicKeyPEM)
        } catch {
            throw SimulatorError(.invalidRequest, "connectPublicKeyPEM is not a P-256 public key in PEM: \(error)")
        }
    }

    /// Accepts the request or throws a `Refusal`; `now` is the wall clock, as for the Server API.
    func verify(authorization: String?, now: Date) async throws {
        guard let authorization, let token = ServerAPITokenVerifier.bearerToken(authorization) else {
            throw Refusal("no Bearer token")
        }
        let header = try ServerAPITokenVerifier.header(of: token)
        guard header.alg == "ES256" else { throw Refusal("alg is \(header.alg ?? "missing"), not ES256") }
        guard let kid = header.kid else { throw Refusal("no kid") }
        if let keyId, kid != keyId { throw Refusal("kid is not the configured key id") }
        if let typ = header.typ, typ != "JWT" { throw Refusal("typ is \(typ), not JWT") }

        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key)
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self)
        } catch {
            throw Refusal("signature or payload refused: \(error)")
        }
        guard claims.bid == nil else { throw Refusal("bid is a Server API claim, not App Store Connect's") }
        guard let iss = claims.iss?.value else { throw Refusal("no iss") }
        if let issuerId, iss != issuerId { throw Refusal("iss is not the configured issuer") }
        guard claims.aud?.value == [ServerAPITokenVerifier.audience] else {
            throw Refusal("aud is not \(ServerAPITokenVerifier.audience)")
        }
        guard let issuedAt = claims.iat?.value else { throw Refusal("no iat") }
        guard let expiresAt = claims.exp?.value else { throw Refusal("no exp") }
        guard issuedAt.timeIntervalSince(now) <= ServerAPITokenVerifier.allowedSkew else {
            throw Refusal("iat is in the future")
        }
        guard expiresAt > now else { throw Refusal("expired") }
        guard expiresAt.timeIntervalSince(issuedAt) <= Self.maximumLifetime else {
            throw Refusal("exp is more than 20 minutes after iat")
        }
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim?
        var aud: AudienceClaim?
        var bid: String?
        var iat: IssuedAtClaim?
        var exp: ExpirationClaim?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
