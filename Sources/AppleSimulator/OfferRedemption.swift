import Foundation

/// An offer the app hands StoreKit with a purchase, signed by the app's server with its In-App
/// Purchase key: what `AppleSimulator.purchase(..., offer:)` redeems.
///
/// The simulator checks it as the App Store does, with the public half of the key it already
/// holds for Server API tokens (`AppleSimulator.Configuration.serverAPI`): its key id, its
/// signature, the app and the product, and for the original signature its age.
/// See https://developer.apple.com/documentation/storekit/generating-jws-to-sign-app-store-requests
public enum OfferRedemption: Sendable, Hashable {
    /// A promotional offer signed the original way: StoreKit's `SKPaymentDiscount`, or
    /// `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`.
    case promotionalOffer(PromotionalOfferSignature)
    /// A promotional offer signed as a compact JWS (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`):
    /// header `alg` ES256 and `kid`; claims `iss`, `bid`, `iat`, `aud` "promotional-offer",
    /// `nonce`, `productId`, `offerIdentifier` and, optionally, `transactionId` (any transaction
    /// of the customer's, or their `appTransactionId`).
    case promotionalOfferJWS(String)
    /// An introductory-offer eligibility, a compact JWS
    /// (`Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`): `aud`
    /// "introductory-offer-eligibility", claims `productId`, `allowIntroductoryOffer` and
    /// `transactionId`. With `allowIntroductoryOffer` false the purchase gets no free trial.
    case introductoryOfferEligibilityJWS(String)
}

/// The original promotional offer signature, as StoreKit's `SKPaymentDiscount` carries it.
///
/// `signature` is the base64 of a DER ECDSA P-256 / SHA-256 signature over the bundle id, key
/// id, product id, offer id, app account token (lower case, empty without one), nonce (lower
/// case) and timestamp, joined by U+2063. The product and the app account token are the
/// purchase's. Valid for 24 hours from `timestamp` on the simulated clock.
/// See https://developer.apple.com/documentation/storekit/generating-a-signature-for-promotional-offers
public struct PromotionalOfferSignature: Sendable, Hashable, Codable {
    /// The offer's id, as set up in App Store Connect.
    public var offerIdentifier: String
    /// The In-App Purchase key's id.
    public var keyIdentifier: String
    /// A one-time value the server generated.
    public var nonce: UUID
    /// When the server signed, in milliseconds since 1970 (UTC).
    public var timestamp: Int64
    /// Base64 of the DER signature.
    public var signature: String

    public init(offerIdentifier: String, keyIdentifier: String, nonce: UUID, timestamp: Int64, signature: String) {
        self.offerIdentifier = offerIdentifier
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
    }
}
