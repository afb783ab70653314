import AppStore
import Crypto
import Foundation
import Primitives

/// Signs the offers StoreKit redeems (docs/http-api.md `POST /v1/offers/signatures`), with an In-App
/// Purchase key from App Store Connect (a `.p8`, P-256): the legacy promotional-offer signature
/// and the two JWS kinds StoreKit 2 takes, as Apple's app-store-server-library-swift makes them:
///
/// - legacy: `Sources/AppStoreServerLibrary/PromotionalOfferSignatureCreator.swift`
///   (`PromotionalOfferSignatureCreator.createSignature`);
/// - JWS: `Sources/AppStoreServerLibrary/JWSSignatureCreator.swift`
///   (`PromotionalOfferV2SignatureCreator`, `IntroductoryOfferEligibilitySignatureCreator`),
///   checked against `Tests/AppStoreServerLibraryTests/JWSSignatureCreatorTests.swift`.
///
/// Nothing here reads a clock or draws a nonce: the caller passes both, records them with the
/// signature, and gets the same message for the same inputs. The key never appears in an error
/// or in `description`.
public struct OfferSigner: Sendable, CustomStringConvertible {
    private let key: P256.Signing.PrivateKey
    public let keyId: String
    public let issuerId: String
    public let bundleId: String

    /// The separator of the legacy message's fields, U+2063 INVISIBLE SEPARATOR.
    static let legacySeparator: Character = "\u{2063}"

    public init(privateKeyPEM: String, keyId: String, issuerId: String, bundleId: String) throws(AppStoreError) {
        guard !keyId.isEmpty, !issuerId.isEmpty, !bundleId.isEmpty else {
            throw AppStoreError(.invalidConfiguration, "offer signatures need a key id, an issuer id and a bundle id")
        }
        guard !keyId.contains(Self.legacySeparator), !bundleId.contains(Self.legacySeparator) else {
            throw AppStoreError(.invalidConfiguration, "the key id and the bundle id may not contain U+2063")
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw AppStoreError(
                .invalidConfiguration, "the offer signing key is not a P-256 private key in PEM", underlying: "\(type(of: error))")
        }
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    /// With the Server API's key, issuer and bundle: Apple signs offers with the same kind of
    /// In-App Purchase key it takes for the Server API's tokens.
    public init(configuration: ServerAPIConfiguration) throws(AppStoreError) {
        try self.init(
            privateKeyPEM: configuration.privateKeyPEM, keyId: configuration.keyId, issuerId: configuration.issuerId,
            bundleId: configuration.bundleId)
    }

    // MARK: Legacy promotional offer

    /// Legacy promotional offer (StoreKit 1 SKPaymentDiscount / StoreKit 2
    /// .promotionalOffer(offerID:keyID:nonce:signature:timestamp:)): ECDSA P-256 SHA-256 over the
    /// U+2063-joined fields, DER, base64.
    ///
    /// The message is `bundleId`, `keyId`, `productId`, `offerId`, `appAccountToken`, `nonce`, `timestampMs`
    /// (U+2063 between each), the app account token and the nonce as lower-case UUID strings, no
    /// token an empty field; the signature is the DER ECDSA signature of its UTF-8 bytes' SHA-256,
    /// in standard base64 (with padding). As `PromotionalOfferSignatureCreator.createSignature` in
    /// app-store-server-library-swift `Sources/AppStoreServerLibrary/PromotionalOfferSignatureCreator.swift`
    /// (it lower-cases `appAccountToken` and `nonce.uuidString`, signs `SHA256.hash(data:)`,
    /// returns `derRepresentation.base64EncodedString()`). StoreKit takes the same lower-case
    /// nonce and token, and the offer stays redeemable 24 hours after `timestampMs`.
    public func legacyPromotionalOffer(
        productId: String, offerId: String, appAccountToken: UUID?, nonce: UUID, timestampMs: Int64
    ) throws(AppStoreError) -> String {
        guard !productId.isEmpty, !offerId.isEmpty else {
            throw AppStoreError(.invalidRequest, "a promotional offer needs a product id and an offer id")
        }
        guard !productId.contains(Self.legacySeparator), !offerId.contains(Self.legacySeparator) else {
            throw AppStoreError(.invalidRequest, "a product id or an offer id may not contain U+2063")
        }
        let message = Self.legacyMessage(
            bundleId: bundleId, keyId: keyId, productId: productId, offerId: offerId, appAccountToken: appAccountToken,
            nonce: nonce, timestampMs: timestampMs)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.signature(for: SHA256.hash(data: Data(message.utf8)))
        } catch {
            throw AppStoreError(.invalidConfiguration, "signing with the offer key failed", underlying: "\(type(of: error))")
        }
        return signature.derRepresentation.base64EncodedString()
    }

    /// The legacy message the signature covers (see `legacyPromotionalOffer`).
    static func legacyMessage(
        bundleId: String, keyId: String, productId: String, offerId: String, appAccountToken: UUID?, nonce: UUID,
        timestampMs: Int64
    ) -> String {
        [
            bundleId, keyId, productId, offerId, appAccountToken?.uuidString.lowercased() ?? "", nonce.uuidString.lowercased(),
            String(timestampMs),
        ].joined(separator: String(legacySeparator))
    }

    // MARK: JWS kinds

    /// StoreKit 2 PromotionalOfferV2 JWS (aud "promotional-offer").
    ///
    /// Header `alg` `ES256`, `kid` the key id, `typ` `JWT`; claims `iss` (issuer id), `bid`,
    /// `aud` `promotional-offer`, `iat` (`issuedAt`, seconds), `nonce` (`nonce.uuidString`),
    /// `productId`, `offerIdentifier` and `transactionId` (left out when nil); no `exp`. As
    /// `PromotionalOfferV2SignatureCreator` in app-store-server-library-swift
    /// `Sources/AppStoreServerLibrary/JWSSignatureCreator.swift` (which draws `UUID().uuidString`
    /// and `Date()` itself; here the caller passes both), and its test
    /// `Tests/AppStoreServerLibraryTests/JWSSignatureCreatorTests.swift`.
    /// Apple recommends a `transactionId` of the customer (their `appTransactionId` will do).
    public func promotionalOfferV2(
        productId: String, offerId: String, transactionId: String?, nonce: UUID, issuedAt: Int64
    ) throws(AppStoreError) -> String {
        guard !productId.isEmpty, !offerId.isEmpty else {
            throw AppStoreError(.invalidRequest, "a promotional offer needs a product id and an offer id")
        }
        guard transactionId?.isEmpty != true else {
            throw AppStoreError(.invalidRequest, "a promotional offer's transaction id, when given, may not be empty")
        }
        return try compactJWS(
            PromotionalOfferV2Claims(
                iss: issuerId, bid: bundleId, aud: "promotional-offer", iat: issuedAt, nonce: nonce.uuidString,
                productId: productId, offerIdentifier: offerId, transactionId: transactionId))
    }

    /// Introductory offer eligibility JWS (aud "introductory-offer-eligibility").
    ///
    /// Header as `promotionalOfferV2`; claims `iss`, `bid`, `aud`
    /// `introductory-offer-eligibility`, `iat`, `nonce`, `productId`, `allowIntroductoryOffer` (a
    /// JSON boolean) and `transactionId` (required); no `exp`. As
    /// `IntroductoryOfferEligibilitySignatureCreator` in app-store-server-library-swift
    /// `Sources/AppStoreServerLibrary/JWSSignatureCreator.swift` and its test.
    public func introductoryOfferEligibility(
        productId: String, allowIntroductoryOffer: Bool, transactionId: String, nonce: UUID, issuedAt: Int64
    ) throws(AppStoreError) -> String {
        guard !productId.isEmpty, !transactionId.isEmpty else {
            throw AppStoreError(.invalidRequest, "introductory offer eligibility needs a product id and a transaction id")
        }
        return try compactJWS(
            IntroductoryOfferEligibilityClaims(
                iss: issuerId, bid: bundleId, aud: "introductory-offer-eligibility", iat: issuedAt, nonce: nonce.uuidString,
                productId: productId, allowIntroductoryOffer: allowIntroductoryOffer, transactionId: transactionId))
    }

    /// `header.payload.signature`, base64url without padding (RFC 7515 §7.1), ES256: the raw
    /// r ‖ s signature (64 bytes) of `header.payload`, as `SignedDataVerifier` reads Apple's.
    private func compactJWS(_ claims: some Encodable) throws(AppStoreError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput: String
        do {
            let header = try encoder.encode(OfferJWSHeader(alg: "ES256", kid: keyId, typ: "JWT"))
            let payload = try encoder.encode(claims)
            signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        } catch {
            throw AppStoreError(.invalidRequest, "the offer's claims could not be encoded", underlying: "\(type(of: error))")
        }
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.signature(for: Data(signingInput.utf8))
        } catch {
            throw AppStoreError(.invalidConfiguration, "signing with the offer key failed", underlying: "\(type(of: error))")
        }
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    public var description: String { "OfferSigner(key id: \(keyId), issuer: \(issuerId), bundle: \(bundleId))" }
}

/// The protected header Apple's library writes (JWTKit adds `alg`; the library sets `typ` and `kid`).
private struct OfferJWSHeader: Encodable {
    var alg: String
    var kid: String
    var typ: String
}

private struct PromotionalOfferV2Claims: Encodable {
    var iss: String
    var bid: String
    var aud: String
    /// Seconds since 1970.
    var iat: Int64
    var nonce: String
    var productId: String
    var offerIdentifier: String
    /// Encoded only when present (synthesized `encodeIfPresent`), as Apple's test expects.
    var transactionId: String?
}

private struct IntroductoryOfferEligibilityClaims: Encodable {
    var iss: String
    var bid: String
    var aud: String
    /// Seconds since 1970.
    var iat: Int64
    var nonce: String
    var productId: String
    var allowIntroductoryOffer: Bool
    var transactionId: String
}
