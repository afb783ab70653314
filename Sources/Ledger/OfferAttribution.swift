/// Which offer signature allowed a purchase. Apple's transaction names the offer it redeemed
/// (`offerIdentifier`) but not the signature, nor, for the JWS kinds, its nonce; the ledger
/// knows every signature it issued (`OfferSignatureIssued`). The one that allowed the purchase is
/// the latest issued to that user for that product's offer at or before the purchase, and, for
/// the legacy kind, not yet expired then: StoreKit takes the signature the app was given for the
/// offer the customer accepted, and the app asks for one when it shows the offer.
public enum OfferAttribution {
    /// How far Apple's purchase date may trail the ledger's clock at signing: the two clocks are
    /// different machines', and a purchase made a moment after its signature must still find it.
    public static let clockSkewMs: Int64 = 60_000

    /// The signature among `issued` (in log order) that allowed `entry`, bought by `userId`.
    public static func signature(allowing entry: EvidenceEntry, userId: String, among issued: [OfferSignatureIssued]) -> OfferSignatureIssued? {
        guard let offer = entry.offerIdentifier, let purchasedAt = entry.purchaseDateMs else { return nil }
        var chosen: OfferSignatureIssued?
        for signature in issued
        where signature.userId == userId && signature.productId == entry.productId && signature.offerId == offer
            && signature.kind != .introductoryEligibility && signature.timestampMs <= purchasedAt + clockSkewMs
            && (signature.expiresAtMs.map { $0 >= purchasedAt } ?? true) {
            // The latest by its time; of two at one time, the later in the log.
            if chosen.map({ signature.timestampMs >= $0.timestampMs }) ?? true { chosen = signature }
        }
        return chosen
    }
}
