import Crypto

/// What the simulator's App Store Server API accepts as a request's `Authorization: Bearer`
/// JWT: the public half of the app's In-App Purchase key and the claims Apple expects with it.
///
/// A token passes when its header says `alg` ES256, `kid` = `keyId` and `typ` JWT; its ES256
/// signature verifies with `publicKeyPEM`; and its claims say `iss` = `issuerId`,
/// `aud` = "appstoreconnect-v1", `bid` = `bundleId`, with `iat` at most 60 s ahead of the wall
/// clock, `exp` still ahead, and at most an hour between them.
/// See https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests
public struct ServerAPIAuthentication: Sendable, Hashable {
    /// The P-256 public key, PEM (`-----BEGIN PUBLIC KEY-----`).
    public var publicKeyPEM: String
    /// The expected `iss`: the issuer id shown on App Store Connect's keys page.
    public var issuerId: String
    /// The expected header `kid`: the key's id.
    public var keyId: String
    /// The expected `bid`. Transactions of other apps are unknown to the Server API (404), as
    /// Apple's answers are per app.
    public var bundleId: String
    /// The team's other apps: an In-App Purchase key is the team's, so a token naming one of
    /// these in `bid` is accepted too, and answered for that app.
    public var otherBundleIds: Set<String> = []

    /// Every app a token may name.
    public var bundleIds: Set<String> { otherBundleIds.union([bundleId]) }

    public init(publicKeyPEM: String, issuerId: String, keyId: String, bundleId: String) {
        self.publicKeyPEM = publicKeyPEM
        self.issuerId = issuerId
        self.keyId = keyId
        self.bundleId = bundleId
    }

    /// Derives the public key from the `.p8` private key (PKCS #8 PEM) the client signs with,
    /// for a demo where the simulator and the ledger read the same key file. The private key is
    /// not kept.
    public init(privateKeyPEM: String, issuerId: String, keyId: String, bundleId: String) throws {
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        self.init(
            publicKeyPEM: key.publicKey.pemRepresentation, issuerId: issuerId, keyId: keyId, bundleId: bundleId)
    }
}
