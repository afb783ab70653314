import Testing

@testable import Ledger

/// Which offer signature allowed a purchase (`OfferAttribution`): Apple names the offer, the
/// ledger knows what it signed. Given the signatures issued, when a purchase redeeming an offer
/// is decided, then its delivery names the latest valid one issued before it.
@Suite("An offer's purchase names the signature that allowed it")
struct OfferAttributionTests {
    static let bought = Given.t0 + Given.day

    static func signature(
        _ id: String, user: String = Given.alice, product: String = Given.monthly, offer: String? = "LOYAL",
        kind: OfferSignatureKind = .promotional, at time: Int64, expires: Int64? = nil
    ) -> OfferSignatureIssued {
        OfferSignatureIssued(
            signatureId: id, kind: kind, userId: user, productId: product, offerId: offer, transactionId: nil, allowIntroductoryOffer: nil,
            nonce: "n-\(id)", timestampMs: time, keyId: "KEY", appAccountToken: nil, expiresAtMs: expires, signatureSha256: "")
    }

    /// The delivery of a monthly subscription bought at `bought` redeeming `offer`, decided for
    /// `user` with `issued` in the context.
    static func delivery(redeeming offer: String?, by user: String = Given.alice, issued: [OfferSignatureIssued]) throws -> PurchaseDelivered {
        var entry = Given.entry("T1", Given.monthly, purchasedAt: bought, expiresAt: bought + 30 * Given.day)
        entry.offerIdentifier = offer
        var context = Given.context()
        context.offerSignatures = issued
        let decision = PurchaseDecider.decide(Given.submission(by: user), evidence: Given.evidence(entry), context: context)
        let delivered = decision.appends(for: Given.submission(by: user), expecting: .exactly(1), after: []).flatMap(\.events).compactMap { event in
            if case .purchaseDelivered(let d) = event { return d }
            return nil
        }
        return try #require(delivered.first)
    }

    @Test("the latest signature of the offer issued before the purchase, not an earlier one, one issued after, or another offer's")
    func latestBefore() throws {
        let issued = [
            Self.signature("early", at: Self.bought - 3 * Given.day),
            Self.signature("other-offer", offer: "WINBACK", at: Self.bought - Given.minute),
            Self.signature("chosen", at: Self.bought - Given.day),
            Self.signature("after", at: Self.bought + 2 * Given.minute),
            Self.signature("bob's", user: Given.bob, at: Self.bought - Given.minute),
            Self.signature("another product", product: Given.yearly, at: Self.bought - Given.minute),
        ]
        #expect(try Self.delivery(redeeming: "LOYAL", issued: issued).offerSignatureId == "chosen")
    }

    @Test("a legacy signature expired at the purchase did not allow it; a JWS signed a moment after Apple's clock still did")
    func validity() throws {
        let expired = Self.signature("expired", kind: .promotionalLegacy, at: Self.bought - 2 * Given.day, expires: Self.bought - Given.day)
        let valid = Self.signature("valid", kind: .promotionalLegacy, at: Self.bought - 3 * Given.day, expires: Self.bought + Given.minute)
        #expect(try Self.delivery(redeeming: "LOYAL", issued: [valid, expired]).offerSignatureId == "valid")
        // The two clocks differ: Apple's purchase date a few seconds before the ledger's signing.
        let skewed = Self.signature("skewed", at: Self.bought + 5_000)
        #expect(try Self.delivery(redeeming: "LOYAL", issued: [skewed]).offerSignatureId == "skewed")
    }

    @Test("no offer redeemed, or none of its signatures issued, or only an eligibility signature: no signature named")
    func none() throws {
        let issued = [Self.signature("s1", at: Self.bought - Given.minute)]
        #expect(try Self.delivery(redeeming: nil, issued: issued).offerSignatureId == nil)
        #expect(try Self.delivery(redeeming: "LOYAL", issued: []).offerSignatureId == nil)
        let eligibility = Self.signature("e1", offer: "LOYAL", kind: .introductoryEligibility, at: Self.bought - Given.minute)
        #expect(try Self.delivery(redeeming: "LOYAL", issued: [eligibility]).offerSignatureId == nil)
        #expect(try Self.delivery(redeeming: "LOYAL", by: Given.bob, issued: issued).offerSignatureId == nil, "another user's")
    }
}
