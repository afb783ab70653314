import AppStore
import AppStoreClient
import Crypto
import Foundation
import Ledger
import LedgerStore

/// `POST /v1/offers/signatures`'s request.
public struct OfferSignatureRequest: Sendable, Hashable {
    public var userId: String
    public var productId: String
    public var kind: OfferSignatureKind
    public var offerId: String?
    public var transactionId: String?
    public var allowIntroductoryOffer: Bool?
    /// The app the offer is for; nil: the only app served (required with several).
    public var bundleId: String?

    public init(
        userId: String, productId: String, kind: OfferSignatureKind, offerId: String?, transactionId: String?, allowIntroductoryOffer: Bool?,
        bundleId: String? = nil
    ) {
        self.userId = userId
        self.productId = productId
        self.kind = kind
        self.offerId = offerId
        self.transactionId = transactionId
        self.allowIntroductoryOffer = allowIntroductoryOffer
        self.bundleId = bundleId
    }
}

/// What the app passes to StoreKit.
public struct IssuedOfferSignature: Sendable, Hashable {
    public var signature: String
    public var event: OfferSignatureIssued
}

extension PurchaseService {
    /// Legacy promotional-offer signatures are accepted by StoreKit for 24 hours after their timestamp.
    static let legacyOfferLifetimeMs: Int64 = 86_400_000

    /// Signs an offer with the In-App Purchase key (the Server API's `.p8`, `OfferSigner`) and
    /// records who was offered what (`OfferSignatureIssued`: user, product, offer, nonce,
    /// expiry, the signature's sha256, never the key). The same `Idempotency-Key` again answers
    /// the first signature's record (its signature is not kept, so it is signed again over the
    /// same nonce and time: the same claims).
    public func issueOfferSignature(
        _ request: OfferSignatureRequest, idempotencyKey: IdempotencyKey? = nil, metadata: RequestMetadata
    ) async throws -> IssuedOfferSignature {
        // A signature names its app (`bid`), and the product id is the app's.
        let app = try app(named: request.bundleId)
        let client = try await requireServerAPI(for: app)
        let signer: OfferSigner
        do {
            signer = try OfferSigner(configuration: client.configuration)
        } catch {
            throw LedgerServiceError(.invalidConfiguration, "the In-App Purchase key cannot sign offers: \(error)")
        }
        switch request.kind {
        case .promotional, .promotionalLegacy:
            guard let offer = request.offerId, !offer.isEmpty else { throw LedgerServiceError(.invalidRequest, "offer_id is required for \(request.kind.rawValue)") }
        case .introductoryEligibility:
            guard request.allowIntroductoryOffer != nil, let transaction = request.transactionId, !transaction.isEmpty else {
                throw LedgerServiceError(.invalidRequest, "allow_introductory_offer and transaction_id are required for introductory_eligibility")
            }
        }
        return try await mappingDatabaseErrors {
            try await once(key: idempotencyKey?.stored, naming: "Idempotency-Key \(idempotencyKey?.text ?? "")", earlier: { event -> IssuedOfferSignature? in
                guard case .offerSignatureIssued(let first) = event, first.userId == request.userId, first.productId == request.productId,
                      first.kind == request.kind, first.offerId == request.offerId,
                      (first.bundleId ?? app) == app else { return nil }
                return IssuedOfferSignature(signature: try Self.sign(first, token: try await openedToken(of: first), with: signer), event: first)
            }) {
                let catalog = try await reads.catalog(of: app)
                guard let product = catalog[request.productId] else {
                    throw LedgerServiceError(.unknownProduct, "product \(request.productId) is not in the catalog")
                }
                if request.kind != .introductoryEligibility, product.kind != .autoRenewable {
                    throw LedgerServiceError(.invalidRequest, "promotional offers are for auto-renewable subscriptions; \(request.productId) is \(product.kind.rawValue)")
                }
                let token = try await reads.latestAppAccountToken(userId: request.userId)
                let now = clock()
                var issued = OfferSignatureIssued(
                    signatureId: UUID().uuidString.lowercased(), kind: request.kind, userId: request.userId, productId: request.productId,
                    offerId: request.offerId, transactionId: request.transactionId, allowIntroductoryOffer: request.allowIntroductoryOffer,
                    nonce: UUID().uuidString.lowercased(), timestampMs: now, keyId: signer.keyId, appAccountToken: token,
                    expiresAtMs: request.kind == .promotionalLegacy ? now + Self.legacyOfferLifetimeMs : nil, signatureSha256: "",
                    bundleId: app)
                let signature = try Self.sign(issued, token: try await openedToken(of: issued), with: signer)
                issued.signatureSha256 = SHA256.hash(data: Data(signature.utf8)).map { String(format: "%02x", $0) }.joined()
                try await log.append(
                    [LedgerAppend(stream: Streams.offerSignature(issued.signatureId), expectation: .noStream, events: [.offerSignatureIssued(issued)])],
                    metadata: metadata, idempotencyKey: idempotencyKey?.stored)
                return IssuedOfferSignature(signature: signature, event: issued)
            }
        }
    }

    /// The app account token a signature names, as Apple must be given it: the log holds its
    /// handle (docs/erasure.md). An erased person's signs none.
    private func openedToken(of issued: OfferSignatureIssued) async throws -> String? {
        guard let recorded = issued.appAccountToken else { return nil }
        return try await people.plaintext(of: recorded)
    }

    /// The signature of a recorded issue: the same claims, so the same kind of proof. `token`:
    /// its app account token opened (`openedToken(of:)`).
    static func sign(_ issued: OfferSignatureIssued, token: String?, with signer: OfferSigner) throws -> String {
        guard let nonce = UUID(uuidString: issued.nonce) else { throw LedgerServiceError(.invalidRequest, "the recorded nonce is not a UUID") }
        do {
            switch issued.kind {
            case .promotional:
                return try signer.promotionalOfferV2(
                    productId: issued.productId, offerId: issued.offerId ?? "", transactionId: issued.transactionId, nonce: nonce,
                    issuedAt: issued.timestampMs / 1_000)
            case .promotionalLegacy:
                return try signer.legacyPromotionalOffer(
                    productId: issued.productId, offerId: issued.offerId ?? "", appAccountToken: token.flatMap(UUID.init(uuidString:)),
                    nonce: nonce, timestampMs: issued.timestampMs)
            case .introductoryEligibility:
                return try signer.introductoryOfferEligibility(
                    productId: issued.productId, allowIntroductoryOffer: issued.allowIntroductoryOffer ?? false, transactionId: issued.transactionId ?? "",
                    nonce: nonce, issuedAt: issued.timestampMs / 1_000)
            }
        } catch {
            throw LedgerServiceError(.invalidRequest, "the offer could not be signed: \(error)")
        }
    }
}
