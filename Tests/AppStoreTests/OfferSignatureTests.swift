import Crypto
import Foundation
import Primitives
import Testing

@testable import AppStore
@testable import AppStoreClient

/// The offer signatures StoreKit redeems, checked against the formats of Apple's
/// app-store-server-library-swift: `Sources/AppStoreServerLibrary/PromotionalOfferSignatureCreator.swift`
/// and `Sources/AppStoreServerLibrary/JWSSignatureCreator.swift`, with the inputs of
/// `Tests/AppStoreServerLibraryTests/PromotionalOfferSignatureCreatorTests.swift` and the header
/// and claims `Tests/AppStoreServerLibraryTests/JWSSignatureCreatorTests.swift` asserts.
@Suite("Offer signatures")
struct OfferSignatureTests {
    // Apple's tests' values: keyId "keyId", issuerId "issuerId", bundleId "bundleId", product
    // "productId", offer "offerId", nonce 20fba8a0-…, timestamp 1698148900000.
    static let keyId = "keyId"
    static let issuerId = "issuerId"
    static let bundleId = "bundleId"
    static let nonce = UUID(uuidString: "20fba8a0-2b80-4a7d-a17f-85c1854727f8")!
    static let timestampMs: Int64 = 1_698_148_900_000
    /// Upper case as `UUID.uuidString` writes it: the message must carry it lower-cased.
    static let appAccountToken = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!

    static func signer(_ key: P256.Signing.PrivateKey) throws -> OfferSigner {
        try OfferSigner(privateKeyPEM: key.pemRepresentation, keyId: keyId, issuerId: issuerId, bundleId: bundleId)
    }

    static func json(_ part: Substring) throws -> [String: Any] {
        let data = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The JWS's header, claims and raw payload text, its ES256 signature checked with `key`.
    static func decode(_ jws: String, verifiedWith key: P256.Signing.PublicKey) throws -> (header: [String: Any], claims: [String: Any], payload: String) {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let raw = try #require(Base64URL.decode(parts[2]))
        #expect(raw.count == 64, "ES256 in a JWS is r ‖ s, 32 bytes each")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
        #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        let payload = String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
        return try (json(parts[0]), json(parts[1]), payload)
    }

    static func legacySignature(_ base64: String) throws -> P256.Signing.ECDSASignature {
        try P256.Signing.ECDSASignature(derRepresentation: try #require(Data(base64Encoded: base64)))
    }

    // MARK: Legacy

    @Test("the legacy message is Apple's: seven fields joined by U+2063, token and nonce lower case")
    func legacyMessage() {
        let message = OfferSigner.legacyMessage(
            bundleId: Self.bundleId, keyId: Self.keyId, productId: "productId", offerId: "offerId",
            appAccountToken: Self.appAccountToken, nonce: Self.nonce, timestampMs: Self.timestampMs)
        #expect(message == "bundleId\u{2063}keyId\u{2063}productId\u{2063}offerId\u{2063}7e3fb20b-4cdb-47cc-936d-99d65f608138\u{2063}20fba8a0-2b80-4a7d-a17f-85c1854727f8\u{2063}1698148900000")
        let withoutToken = OfferSigner.legacyMessage(
            bundleId: Self.bundleId, keyId: Self.keyId, productId: "productId", offerId: "offerId",
            appAccountToken: nil, nonce: Self.nonce, timestampMs: Self.timestampMs)
        #expect(withoutToken == "bundleId\u{2063}keyId\u{2063}productId\u{2063}offerId\u{2063}\u{2063}20fba8a0-2b80-4a7d-a17f-85c1854727f8\u{2063}1698148900000")
    }

    @Test("the legacy signature is base64 DER ECDSA P-256 SHA-256 over exactly that message")
    func legacySignatureVerifies() throws {
        let key = P256.Signing.PrivateKey()
        let signature = try Self.signer(key).legacyPromotionalOffer(
            productId: "productId", offerId: "offerId", appAccountToken: Self.appAccountToken, nonce: Self.nonce,
            timestampMs: Self.timestampMs)
        let der = try Self.legacySignature(signature)
        let lower = "bundleId\u{2063}keyId\u{2063}productId\u{2063}offerId\u{2063}7e3fb20b-4cdb-47cc-936d-99d65f608138\u{2063}20fba8a0-2b80-4a7d-a17f-85c1854727f8\u{2063}1698148900000"
        #expect(key.publicKey.isValidSignature(der, for: SHA256.hash(data: Data(lower.utf8))))
        #expect(key.publicKey.isValidSignature(der, for: Data(lower.utf8)))
        // The same fields with the token and the nonce as `uuidString` writes them do not verify.
        let upper = "bundleId\u{2063}keyId\u{2063}productId\u{2063}offerId\u{2063}\(Self.appAccountToken.uuidString)\u{2063}\(Self.nonce.uuidString)\u{2063}1698148900000"
        #expect(upper != lower)
        #expect(!key.publicKey.isValidSignature(der, for: Data(upper.utf8)))
        // Another key does not verify it.
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(der, for: Data(lower.utf8)))
    }

    @Test("without an app account token the field is empty, and the signature covers that")
    func legacyWithoutToken() throws {
        let key = P256.Signing.PrivateKey()
        let signature = try Self.signer(key).legacyPromotionalOffer(
            productId: "productId", offerId: "offerId", appAccountToken: nil, nonce: Self.nonce, timestampMs: Self.timestampMs)
        let message = "bundleId\u{2063}keyId\u{2063}productId\u{2063}offerId\u{2063}\u{2063}20fba8a0-2b80-4a7d-a17f-85c1854727f8\u{2063}1698148900000"
        #expect(key.publicKey.isValidSignature(try Self.legacySignature(signature), for: Data(message.utf8)))
    }

    @Test("a legacy offer with no product or offer id, or a field holding U+2063, is refused")
    func legacyRefusesBadFields() throws {
        let signer = try Self.signer(P256.Signing.PrivateKey())
        for (product, offer) in [("", "offerId"), ("productId", ""), ("product\u{2063}Id", "offerId"), ("productId", "offer\u{2063}")] {
            #expect(throws: AppStoreError.self) {
                try signer.legacyPromotionalOffer(
                    productId: product, offerId: offer, appAccountToken: nil, nonce: Self.nonce, timestampMs: Self.timestampMs)
            }
        }
    }

    // MARK: JWS

    @Test("a promotional offer V2 JWS: ES256 header with kid and typ JWT, Apple's claims, no exp, signed by the key")
    func promotionalOfferV2() throws {
        let key = P256.Signing.PrivateKey()
        let jws = try Self.signer(key).promotionalOfferV2(
            productId: "productId", offerId: "offerIdentifier", transactionId: "transactionId", nonce: Self.nonce,
            issuedAt: 1_698_148_900)
        let (header, claims, _) = try Self.decode(jws, verifiedWith: key.publicKey)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == Self.keyId)
        #expect(header["typ"] as? String == "JWT")
        #expect(Set(header.keys) == ["alg", "kid", "typ"])
        #expect(claims["iss"] as? String == Self.issuerId)
        #expect(claims["bid"] as? String == Self.bundleId)
        #expect(claims["aud"] as? String == "promotional-offer")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_698_148_900)
        #expect(claims["nonce"] as? String == Self.nonce.uuidString)
        #expect(claims["productId"] as? String == "productId")
        #expect(claims["offerIdentifier"] as? String == "offerIdentifier")
        #expect(claims["transactionId"] as? String == "transactionId")
        #expect(claims["exp"] == nil)
        #expect(Set(claims.keys) == ["iss", "bid", "aud", "iat", "nonce", "productId", "offerIdentifier", "transactionId"])
        // Another key does not verify it.
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test("without a transaction id the promotional offer V2 claim is left out, not null")
    func promotionalOfferV2WithoutTransaction() throws {
        let key = P256.Signing.PrivateKey()
        let jws = try Self.signer(key).promotionalOfferV2(
            productId: "productId", offerId: "offerIdentifier", transactionId: nil, nonce: Self.nonce, issuedAt: 1_698_148_900)
        let (_, claims, payload) = try Self.decode(jws, verifiedWith: key.publicKey)
        #expect(claims["transactionId"] == nil)
        #expect(!payload.contains("transactionId"))
        #expect(claims["offerIdentifier"] as? String == "offerIdentifier")
    }

    @Test("an introductory offer eligibility JWS: Apple's claims, allowIntroductoryOffer a JSON boolean", arguments: [true, false])
    func introductoryOfferEligibility(allow: Bool) throws {
        let key = P256.Signing.PrivateKey()
        let jws = try Self.signer(key).introductoryOfferEligibility(
            productId: "productId", allowIntroductoryOffer: allow, transactionId: "transactionId", nonce: Self.nonce,
            issuedAt: 1_698_148_900)
        let (header, claims, payload) = try Self.decode(jws, verifiedWith: key.publicKey)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == Self.keyId)
        #expect(header["typ"] as? String == "JWT")
        #expect(claims["iss"] as? String == Self.issuerId)
        #expect(claims["bid"] as? String == Self.bundleId)
        #expect(claims["aud"] as? String == "introductory-offer-eligibility")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_698_148_900)
        #expect(claims["nonce"] as? String == Self.nonce.uuidString)
        #expect(claims["productId"] as? String == "productId")
        #expect(claims["transactionId"] as? String == "transactionId")
        #expect(claims["exp"] == nil)
        #expect(payload.contains("\"allowIntroductoryOffer\":\(allow)"), "a JSON boolean, not 0 or 1")
        #expect(Set(claims.keys) == ["iss", "bid", "aud", "iat", "nonce", "productId", "allowIntroductoryOffer", "transactionId"])
    }

    @Test("a JWS with an empty product, offer or transaction id is refused")
    func jwsRefusesEmptyFields() throws {
        let signer = try Self.signer(P256.Signing.PrivateKey())
        #expect(throws: AppStoreError.self) {
            try signer.promotionalOfferV2(productId: "", offerId: "o", transactionId: nil, nonce: Self.nonce, issuedAt: 1)
        }
        #expect(throws: AppStoreError.self) {
            try signer.promotionalOfferV2(productId: "p", offerId: "", transactionId: nil, nonce: Self.nonce, issuedAt: 1)
        }
        #expect(throws: AppStoreError.self) {
            try signer.promotionalOfferV2(productId: "p", offerId: "o", transactionId: "", nonce: Self.nonce, issuedAt: 1)
        }
        #expect(throws: AppStoreError.self) {
            try signer.introductoryOfferEligibility(productId: "p", allowIntroductoryOffer: true, transactionId: "", nonce: Self.nonce, issuedAt: 1)
        }
    }

    // MARK: Key

    @Test("a key that is not P-256 PEM is refused at once, and never shown")
    func badKeyRefused() {
        #expect(throws: AppStoreError.self) {
            try OfferSigner(privateKeyPEM: "not a key", keyId: Self.keyId, issuerId: Self.issuerId, bundleId: Self.bundleId)
        }
        let pem = P256.Signing.PrivateKey().pemRepresentation
        #expect(throws: AppStoreError.self) {
            try OfferSigner(privateKeyPEM: pem, keyId: "", issuerId: Self.issuerId, bundleId: Self.bundleId)
        }
    }

    @Test("the signer's description names the key id, never the key")
    func descriptionHidesKey() throws {
        let key = P256.Signing.PrivateKey()
        let signer = try OfferSigner(
            configuration: ServerAPIConfiguration(
                issuerId: Self.issuerId, keyId: Self.keyId, privateKeyPEM: key.pemRepresentation, bundleId: Self.bundleId))
        #expect(signer.description.contains(Self.keyId))
        #expect(!signer.description.contains("PRIVATE"))
        #expect(signer.keyId == Self.keyId && signer.issuerId == Self.issuerId && signer.bundleId == Self.bundleId)
    }
}
