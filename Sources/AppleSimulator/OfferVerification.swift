import AppStore
import Crypto
import Foundation
import Primitives

/// An offer the App Store accepted for a purchase: what `SimulatorState.purchase` applies.
struct AcceptedOffer: Sendable, Hashable {
    /// Apple's `offerType` of a promotional offer.
    static let promotionalOfferType = 2

    /// The promotional offer redeemed; nil for an introductory-offer eligibility.
    var promotionalOfferIdentifier: String?
    /// False when an introductory-offer eligibility said `allowIntroductoryOffer` false (and for
    /// a promotional offer, which takes the introductory offer's place).
    var allowsIntroductoryOffer: Bool
    /// The JWS's `transactionId` claim, which must be the customer's (`SimulatorState.check`).
    var customerTransactionId: String?
}

/// Checks offers as the App Store does before it lets StoreKit redeem them, with the public
/// half of the app's In-App Purchase key: the key id, the signature, the app (`bid`, or the
/// bundle id inside the original signature), the product, the JWS audience and issuer, and
/// the 24 hours of an original signature on the simulated clock. A refusal is a
/// `SimulatorError` `.invalidOffer` saying why.
///
/// The simulator does not keep the nonces it has seen, nor check a JWS's `iat` (tokens are made
/// on the wall clock, while the simulated one may be anywhere).
struct OfferVerifier: Sendable {
    static let promotionalOfferAudience = "promotional-offer"
    static let introductoryOfferEligibilityAudience = "introductory-offer-eligibility"
    /// How long an original promotional offer signature stays valid.
    static let signatureValidityMs: Int64 = 86_400_000
    /// What joins the parts of an original signature's message: U+2063 INVISIBLE SEPARATOR.
    static let separator = "\u{2063}"

    /// The purchase an offer comes with.
    struct Purchase: Sendable {
        var productId: String
        /// The app bought in.
        var bundleId: String
        var appAccountToken: UUID?
        /// The simulated now, milliseconds since 1970 (UTC).
        var nowMs: Int64
    }

    let keyId: String
    let issuerId: String
    let publicKey: P256.Signing.PublicKey

    /// Throws when the simulator knows no In-App Purchase key, as it then cannot verify.
    init(_ authentication: ServerAPIAuthentication?) throws {
        guard let authentication else {
            throw SimulatorError(
                .invalidOffer, "no In-App Purchase key configured (Configuration.serverAPI): offers cannot be verified")
        }
        do {
            publicKey = try P256.Signing.PublicKey(pemRepresentation: authentication.publicKeyPEM)
        } catch {
            throw SimulatorError(.invalidOffer, "serverAPI.publicKeyPEM is not a P-256 public key in PEM")
        }
        keyId = authentication.keyId
        issuerId = authentication.issuerId
    }

    func verify(_ offer: OfferRedemption, for purchase: Purchase) throws -> AcceptedOffer {
        switch offer {
        case .promotionalOffer(let signature):
            return try verify(signature, for: purchase)
        case .promotionalOfferJWS(let jws):
            let claims = try claims(of: jws, audience: Self.promotionalOfferAudience, for: purchase)
            guard let offerIdentifier = claims.offerIdentifier, !offerIdentifier.isEmpty else {
                throw Self.refusal("the promotional offer JWS has no offerIdentifier")
            }
            return AcceptedOffer(
                promotionalOfferIdentifier: offerIdentifier, allowsIntroductoryOffer: false,
                customerTransactionId: claims.transactionId)
        case .introductoryOfferEligibilityJWS(let jws):
            let claims = try claims(of: jws, audience: Self.introductoryOfferEligibilityAudience, for: purchase)
            guard let allows = claims.allowIntroductoryOffer else {
                throw Self.refusal("the introductory offer eligibility JWS has no allowIntroductoryOffer")
            }
            guard let transactionId = claims.transactionId, !transactionId.isEmpty else {
                throw Self.refusal("the introductory offer eligibility JWS has no transactionId")
            }
            return AcceptedOffer(
                promotionalOfferIdentifier: nil, allowsIntroductoryOffer: allows, customerTransactionId: transactionId)
        }
    }

    /// The original signature: the key id, the age, then the signature over the message the
    /// purchase implies, so another app, product, offer, token, nonce or time fails it.
    private func verify(_ offer: PromotionalOfferSignature, for purchase: Purchase) throws -> AcceptedOffer {
        guard offer.keyIdentifier == keyId else {
            throw Self.refusal("keyIdentifier \(offer.keyIdentifier) is not the In-App Purchase key's id")
        }
        guard purchase.nowMs - offer.timestamp <= Self.signatureValidityMs else {
            throw Self.refusal("the promotional offer was signed more than 24 hours ago")
        }
        guard let der = Data(base64Encoded: offer.signature),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else { throw Self.refusal("the promotional offer signature is not base64 DER ECDSA") }
        let message = [
            purchase.bundleId, offer.keyIdentifier, purchase.productId, offer.offerIdentifier,
            purchase.appAccountToken?.uuidString.lowercased() ?? "", offer.nonce.uuidString.lowercased(),
            String(offer.timestamp),
        ].joined(separator: Self.separator)
        guard publicKey.isValidSignature(signature, for: SHA256.hash(data: Data(message.utf8))) else {
            throw Self.refusal(
                "the promotional offer signature does not verify for this app, key, product, offer, app account token, nonce and timestamp")
        }
        return AcceptedOffer(
            promotionalOfferIdentifier: offer.offerIdentifier, allowsIntroductoryOffer: false, customerTransactionId: nil)
    }

    /// The claims of a JWS signed with the key, checked against `audience` and the purchase.
    private func claims(of jws: String, audience: String, for purchase: Purchase) throws -> Claims {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: headerBytes)
        else { throw Self.refusal("the offer is not a compact JWS") }
        guard header.alg == "ES256" else { throw Self.refusal("the offer JWS's alg is not ES256") }
        guard header.kid == keyId else { throw Self.refusal("the offer JWS's kid is not the In-App Purchase key's id") }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { throw Self.refusal("the offer JWS's signature does not verify with the In-App Purchase key") }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: payload) else {
            throw Self.refusal("the offer JWS's payload is not the claims expected")
        }
        guard claims.aud == [audience] else { throw Self.refusal("the offer JWS's aud is not \(audience)") }
        guard claims.iss == issuerId else { throw Self.refusal("the offer JWS's iss is not the key's issuer") }
        guard claims.bid == purchase.bundleId else {
            throw Self.refusal("the offer JWS is for app \(claims.bid ?? "none"), not \(purchase.bundleId)")
        }
        guard claims.iat != nil, claims.nonce?.isEmpty == false else {
            throw Self.refusal("the offer JWS has no iat or no nonce")
        }
        guard claims.productId == purchase.productId else {
            throw Self.refusal("the offer JWS is for product \(claims.productId ?? "none"), not \(purchase.productId)")
        }
        return claims
    }

    private static func refusal(_ reason: String) -> SimulatorError {
        SimulatorError(.invalidOffer, reason)
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    /// The claims of both offer JWSs; all optional, so a missing one is refused with a reason.
    private struct Claims: Decodable {
        var iss: String?
        var bid: String?
        /// A JWT `aud` is one string or a list of them.
        var aud: [String]
        /// Seconds since 1970.
        var iat: Double?
        var nonce: String?
        var productId: String?
        var offerIdentifier: String?
        var transactionId: String?
        var allowIntroductoryOffer: Bool?

        enum CodingKeys: String, CodingKey {
            case iss, bid, aud, iat, nonce, productId, offerIdentifier, transactionId, allowIntroductoryOffer
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            iss = try container.decodeIfPresent(String.self, forKey: .iss)
            bid = try container.decodeIfPresent(String.self, forKey: .bid)
            if let one = try? container.decode(String.self, forKey: .aud) {
                aud = [one]
            } else {
                aud = try container.decodeIfPresent([String].self, forKey: .aud) ?? []
            }
            iat = try container.decodeIfPresent(Double.self, forKey: .iat)
            nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
            productId = try container.decodeIfPresent(String.self, forKey: .productId)
            offerIdentifier = try container.decodeIfPresent(String.self, forKey: .offerIdentifier)
            transactionId = try container.decodeIfPresent(String.self, forKey: .transactionId)
            allowIntroductoryOffer = try container.decodeIfPresent(Bool.self, forKey: .allowIntroductoryOffer)
        }
    }
}
