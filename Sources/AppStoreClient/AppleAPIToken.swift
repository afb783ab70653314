import JWTKit

/// The claims Apple requires of a token for either of its APIs (ES256, header `kid` and
/// `typ: JWT`): `iss`, `iat`, `exp` and `aud` `appstoreconnect-v1` for both; the Server API's
/// add `bid`, the app's bundle id, which a team key's App Store Connect token must not carry
/// (nil is left out of the JSON).
/// https://developer.apple.com/documentation/appstoreserverapi/generating_json_web_tokens_for_api_requests
/// https://developer.apple.com/documentation/appstoreconnectapi/generating-tokens-for-api-requests
struct AppleAPIClaims: JWTPayload {
    var iss: String
    /// Seconds since 1970.
    var iat: Int64
    /// Seconds since 1970; at most 60 minutes after `iat` (the Server API), 20 (App Store Connect).
    var exp: Int64
    var aud: String
    var bid: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A bearer token for one of Apple's APIs, signed once and reused (`ES256Token`).
typealias AppleAPIToken = ES256Token<AppleAPIClaims>

extension ES256Token where Claims == AppleAPIClaims {
    /// Both APIs name App Store Connect as the audience, as Apple documents.
    static var audience: String { "appstoreconnect-v1" }

    /// Signed with `access`'s key for `access.tokenLifetime`, carrying `bundleId` when given.
    convenience init(access: AppleAPIAccess, bundleId: String?, renewBefore: Duration, name: String) async throws {
        try await self.init(access: access, renewBefore: renewBefore, name: name) { issued, expires in
            AppleAPIClaims(iss: access.issuerId, iat: issued, exp: expires, aud: AppleAPIToken.audience, bid: bundleId)
        }
    }
}
