import Foundation
import JWTKit
import Primitives

/// Checks the `Authorization: Bearer` JWT of an App Store Server API request as Apple does
/// (see `ServerAPIAuthentication` for the rules).
///
/// A refusal carries its reason for the simulator's debug log only: Apple answers 401 with no
/// body and no reason, and so does the simulator.
struct ServerAPITokenVerifier: Sendable {
    /// The audience every App Store Connect API token names.
    static let audience = "appstoreconnect-v1"
    /// How far ahead of the wall clock `iat` may be (clock skew between client and Apple).
    static let allowedSkew: TimeInterval = 60
    /// The longest lifetime (`exp` - `iat`) Apple accepts.
    static let maximumLifetime: TimeInterval = 3600

    /// Why a token was refused (for logs; never sent to the client).
    struct Refusal: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    let authentication: ServerAPIAuthentication
    /// Parsed once, at the simulator's start, so a bad PEM fails there and not on each call.
    let key: ES256PublicKey

    init(_ authentication: ServerAPIAuthentication) throws {
        self.authentication = authentication
        do {
            key = try ES256PublicKey(pem: authentication.publicKeyPEM)
        } catch {
            throw SimulatorError(.invalidRequest, "serverAPI.publicKeyPEM is not a P-256 public key in PEM: \(error)")
        }
    }

    /// Accepts the request, answering the app its token names (`bid`), or throws a `Refusal`.
    ///
    /// - Parameters:
    ///   - authorization: the `Authorization` header, if any.
    ///   - now: the wall clock: tokens are made by a real client on real time, whatever the
    ///     simulated clock says.
    func verify(authorization: String?, now: Date) async throws -> String {
        guard let authorization, let token = Self.bearerToken(authorization) else {
            throw Refusal("no Bearer token")
        }
        let header = try Self.header(of: token)
        guard header.alg == "ES256" else { throw Refusal("alg is \(header.alg ?? "missing"), not ES256") }
        guard header.kid == authentication.keyId else { throw Refusal("kid is not the configured key id") }
        guard header.typ == "JWT" else { throw Refusal("typ is \(header.typ ?? "missing"), not JWT") }

        // A collection per call: it is an actor filled asynchronously, and cheap with the key
        // already parsed. The key goes in as the default, so the header's kid (checked above)
        // cannot pick another.
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key)
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self)
        } catch {
            throw Refusal("signature or payload refused: \(error)")
        }
        return try check(claims, now: now)
    }

    private func check(_ claims: Claims, now: Date) throws -> String {
        guard claims.iss?.value == authentication.issuerId else { throw Refusal("iss is not the configured issuer") }
        guard claims.aud?.value == [Self.audience] else { throw Refusal("aud is not \(Self.audience)") }
        guard let bundleId = claims.bid, authentication.bundleIds.contains(bundleId) else {
            throw Refusal("bid is not one of the team's bundle ids")
        }
        guard let issuedAt = claims.iat?.value else { throw Refusal("no iat") }
        guard let expiresAt = claims.exp?.value else { throw Refusal("no exp") }
        guard issuedAt.timeIntervalSince(now) <= Self.allowedSkew else { throw Refusal("iat is in the future") }
        guard expiresAt > now else { throw Refusal("expired") }
        guard expiresAt.timeIntervalSince(issuedAt) <= Self.maximumLifetime else {
            throw Refusal("exp is more than an hour after iat")
        }
        return bundleId
    }

    /// The token of "Bearer TOKEN" (scheme in any case), nil for any other scheme.
    static func bearerToken(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The JOSE header, read before the signature so that `alg`, `kid` and `typ` are checked
    /// as sent (jwt-kit's verify does not hand the header back).
    static func header(of token: String) throws -> Header {
        guard let first = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let data = Base64URL.decode(first),
            let header = try? JSONDecoder().decode(Header.self, from: data)
        else { throw Refusal("header is not base64url JSON") }
        return header
    }

    struct Header: Decodable {
        var alg: String?
        var kid: String?
        var typ: String?
    }

    /// The claims Apple reads. All optional, so a missing one is refused by `check` with a
    /// reason rather than by the decoder.
    struct Claims: JWTPayload {
        var iss: IssuerClaim?
        var aud: AudienceClaim?
        var bid: String?
        var iat: IssuedAtClaim?
        var exp: ExpirationClaim?

        /// Nothing here: `check` does it, against the clock it is given.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
