import AppStore
import Foundation
import Testing

@testable import Ledger

/// docs/architecture.md §4 and §5: a subscription's later period is a paid renewal, a non-consumable
/// bought again is no new money, in_app is read oldest first, each period Apple lists is
/// recorded once, and a refused submission still records what Apple's verified answer proves.
@Suite("Deciding a purchase: renewals, repurchases and what a refusal still records")
struct PurchaseDeciderRenewalTests {
    static let period = 30 * Given.day
    static let place = EventPlace(position: 1, recordedAtMs: Given.t0)

    @Test("a renewal submitted with its transaction id by the subscription's holder is delivered as a renewal, granting nothing, and is a sale")
    func renewalSubmittedByHolder() throws {
        let period = Self.period
        let original = Given.delivered("S0", Given.monthly, to: Given.alice, purchasedAt: Given.t0, expiresAt: Given.t0 + period)
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "S1"),
            evidence: Given.evidence(
                Given.entry("S0", Given.monthly, purchasedAt: Given.t0, expiresAt: Given.t0 + period),
                Given.entry("S1", Given.monthly, original: "S0", purchasedAt: Given.t0 + period, expiresAt: Given.t0 + 2 * period)),
            context: Given.context(
                transactions: [.delivered(original)],
                owners: ["S0": Ownership(userId: Given.alice, streamVersion: 1)]))

        #expect(decision.deliveries == [Delivery(
            transactionId: "S1", originalTransactionId: "S0", productId: Given.monthly, orderId: nil,
            userId: Given.alice, quantity: 1, environment: "Production")])
        let delivered = try #require(decision.appended(to: Streams.transaction("S1"))?.event?.asDelivered)
        #expect(delivered.match == .renewal)
        #expect(delivered.match.rawValue == "renewal")
        #expect(delivered.grants.isEmpty)
        #expect(delivered.orderId == nil)
        // No order fulfilled, no new claim: the subscription is Alice's already.
        #expect(decision.streams == [Streams.transaction("S1"), Streams.subscription("S0")])

        guard case .addRevenueSale(let sale)? = RevenueProjection().changes(for: .purchaseDelivered(delivered), at: Self.place).first else {
            Issue.record("a renewal delivered to its holder should be a sale")
            return
        }
        #expect(sale.transactionId == "S1")
        #expect(sale.originalTransactionId == "S0")
        #expect(sale.kind == .autoRenewable)
        #expect(sale.userId == Given.alice)
        #expect(sale.purchaseDateMs == Given.t0 + period)
        #expect(sale.serviceMs == period)
    }

    @Test("a non-consumable the user already owns, bought again on a named order, fulfils the order as a restore and is no sale")
    func nonConsumableBoughtAgainWithOrder() throws {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T2", order: "o-2"),
            evidence: Given.evidence(
                Given.entry("T1", Given.removeAds, purchasedAt: Given.t0 - Given.day),
                Given.entry("T2", Given.removeAds, original: "T1")),
            context: Given.context(
                transactions: [.delivered(Given.delivered("T1", Given.removeAds, to: Given.alice, purchasedAt: Given.t0 - Given.day))],
                owners: ["T1": Ownership(userId: Given.alice, streamVersion: 1)],
                openOrders: [Given.order("o-2", product: Given.removeAds, createdAt: Given.t0)]))

        #expect(decision.deliveries == [Delivery(
            transactionId: "T2", originalTransactionId: "T1", productId: Given.removeAds, orderId: "o-2",
            userId: Given.alice, quantity: 1, environment: "Production")])
        let delivered = try #require(decision.appended(to: Streams.transaction("T2"))?.event?.asDelivered)
        #expect(delivered.match == .restore)
        #expect(delivered.orderId == "o-2")
        #expect(delivered.grants.isEmpty)
        #expect(decision.appended(to: Streams.order("o-2")) == LedgerAppend(
            stream: Streams.order("o-2"), expectation: .exactly(1),
            events: [.orderFulfilled(OrderFulfilled(orderId: "o-2", transactionId: "T2"))]))
        #expect(decision.streams == [Streams.transaction("T2"), Streams.order("o-2")])
        #expect(RevenueProjection().changes(for: .purchaseDelivered(delivered), at: Self.place).isEmpty)
    }

    @Test("a receipt without transaction id listing a renewal before its original delivers the original on the order and records the renewal")
    func unsortedInAppOriginalTakesTheOrder() throws {
        let period = Self.period
        let evidence = Given.evidence(
            Given.entry("S1", Given.monthly, original: "S0", purchasedAt: Given.t0 + period, expiresAt: Given.t0 + 2 * period),
            Given.entry("S0", Given.monthly, purchasedAt: Given.t0 + Given.minute, expiresAt: Given.t0 + period))
        #expect(evidence.entries.map(\.transactionId) == ["S1", "S0"], "Apple's order, renewal first")

        let decision = PurchaseDecider.decide(
            Given.submission(),
            evidence: evidence,
            context: Given.context(openOrders: [Given.order("o-1", product: Given.monthly, createdAt: Given.t0)]))

        #expect(decision.deliveries == [Delivery(
            transactionId: "S0", originalTransactionId: "S0", productId: Given.monthly, orderId: "o-1",
            userId: Given.alice, quantity: 1, environment: "Production")])
        let delivered = try #require(decision.appended(to: Streams.transaction("S0"))?.event?.asDelivered)
        #expect(delivered.orderId == "o-1")
        #expect(decision.appended(to: Streams.order("o-1")) == LedgerAppend(
            stream: Streams.order("o-1"), expectation: .exactly(1),
            events: [.orderFulfilled(OrderFulfilled(orderId: "o-1", transactionId: "S0"))]))
        #expect(decision.appended(to: Streams.ownership("S0"))?.event?.asClaim?.transactionId == "S0")

        let renewalAppend = try #require(decision.appended(to: Streams.transaction("S1")))
        #expect(renewalAppend.event?.asDelivered == nil)
        #expect(renewalAppend.event?.asRenewal == SubscriptionRenewalSeen(
            transactionId: "S1", originalTransactionId: "S0", productId: Given.monthly, userId: Given.alice,
            environment: "Production", purchaseDateMs: Given.t0 + period, expiresDateMs: Given.t0 + 2 * period,
            isTrial: false, priceMilliunits: nil, currency: nil, source: Given.submissionId, bundleId: Given.bundleId))
        #expect(decision.streams == [
            Streams.transaction("S0"), Streams.order("o-1"), Streams.ownership("S0"),
            Streams.transaction("S1"), Streams.subscription("S0"),
        ])
    }

    @Test("the latest period submitted first is delivered, and the original period it lists is recorded once as a renewal of the same user")
    func latestPeriodFirstRecordsTheOriginal() throws {
        let period = Self.period
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "S1"),
            evidence: Given.evidence(
                Given.entry("S0", Given.monthly, purchasedAt: Given.t0 + Given.minute, expiresAt: Given.t0 + period),
                Given.entry("S1", Given.monthly, original: "S0", purchasedAt: Given.t0 + period, expiresAt: Given.t0 + 2 * period)),
            context: Given.context())

        #expect(decision.deliveries.map(\.transactionId) == ["S1"])
        #expect(decision.deliveries.map(\.userId) == [Given.alice])
        #expect(decision.appended(to: Streams.transaction("S1"))?.event?.asDelivered != nil)
        #expect(decision.appended(to: Streams.ownership("S0"))?.event?.asClaim?.transactionId == "S1")

        let original = try #require(decision.appended(to: Streams.transaction("S0")))
        #expect(original.expectation == .noStream)
        #expect(original.event?.asDelivered == nil)
        #expect(original.event?.asRenewal == SubscriptionRenewalSeen(
            transactionId: "S0", originalTransactionId: "S0", productId: Given.monthly, userId: Given.alice,
            environment: "Production", purchaseDateMs: Given.t0 + Given.minute, expiresDateMs: Given.t0 + period,
            isTrial: false, priceMilliunits: nil, currency: nil, source: Given.submissionId, bundleId: Given.bundleId))
        // Each period once: S1 delivered, S0 seen, nothing else per transaction.
        #expect(decision.streams == [
            Streams.transaction("S1"), Streams.ownership("S0"), Streams.transaction("S0"), Streams.subscription("S0"),
        ])
    }

    @Test("under keep, a receipt without transaction id listing only another user's non-consumable is refused as owned by another user",
          arguments: ["R1", "R2"])
    func receiptOfAnotherUsersNonConsumable(transactionId: String) {
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob),
            evidence: Given.evidence(Given.entry(transactionId, Given.removeAds, original: "R1")),
            context: Given.context(
                transferPolicy: .keep,
                transactions: [.delivered(Given.delivered("R1", Given.removeAds, to: Given.alice))],
                owners: ["R1": Ownership(userId: Given.alice, streamVersion: 1)]))
        guard case .rejected(.ownedByAnotherUser, _) = decision.outcome else {
            Issue.record("expected owned_by_another_user, got \(decision.outcome)")
            return
        }
        #expect(decision.appends.isEmpty)
    }

    @Test("a refused submission still records the refund Apple's verified receipt shows for the user it was delivered to")
    func refusalRecordsRefund() {
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob, transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, cancelledAt: Given.t0 + Given.day, cancellationReason: 0)),
            context: Given.context(transactions: [.delivered(Given.delivered("T1", Given.coins, to: Given.alice))]))

        #expect(decision.rejection == .ownedByAnotherUser)
        #expect(decision.appends == [LedgerAppend(
            stream: Streams.refund("T1"), expectation: .noStream,
            events: [.purchaseRefunded(PurchaseRefunded(
                transactionId: "T1", originalTransactionId: "T1", productId: Given.coins, kind: .consumable, quantity: 1,
                userId: Given.alice, environment: "Production", grants: ["coins": 100], refundedAtMs: Given.t0 + Given.day,
                reason: 0, revocation: "refund", source: Given.submissionId, bundleId: Given.bundleId))])])
    }
}

/// `EvidenceEntry(signed:)`: what a StoreKit 2 signed transaction says of a free trial.
@Suite("Evidence from a signed transaction")
struct SignedTransactionEvidenceTests {
    @Test("an introductory FREE_TRIAL offer without a price is a trial, delivered as one and no sale")
    func freeTrialWithoutPrice() throws {
        let json = """
            {
              "transactionId": "2000000000000001",
              "originalTransactionId": "2000000000000001",
              "bundleId": "com.example.app",
              "productId": "com.example.pro.monthly",
              "purchaseDate": 1700000060000,
              "expiresDate": 1700604860000,
              "quantity": 1,
              "type": "Auto-Renewable Subscription",
              "offerType": 1,
              "offerDiscountType": "FREE_TRIAL",
              "environment": "Production"
            }
            """
        let transaction = try JSONDecoder().decode(SignedTransaction.self, from: Data(json.utf8))
        #expect(transaction.price == nil)
        #expect(transaction.offerType == .introductory)
        #expect(transaction.offerDiscountType == .freeTrial)

        let entry = EvidenceEntry(signed: transaction)
        #expect(entry.isTrial)
        #expect(entry.priceMilliunits == nil)

        let evidence = Evidence(signed: transaction)
        #expect(evidence.entry("2000000000000001")?.isTrial == true)

        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "2000000000000001"), evidence: evidence, context: Given.context())
        let delivered = try #require(decision.appended(to: Streams.transaction("2000000000000001"))?.event?.asDelivered)
        #expect(delivered.isTrial)
        #expect(RevenueProjection().changes(for: .purchaseDelivered(delivered), at: EventPlace(position: 1, recordedAtMs: Given.t0)).isEmpty)
    }
}

/// Family Sharing: a family member's transaction has ids of its own, but the purchaser's
/// transaction carries the money; counting both would book one payment twice.
@Suite("Family Sharing access is delivered but is no sale")
struct FamilySharingTests {
    @Test("a FAMILY_SHARED receipt transaction is delivered to the family member, marked, and makes no revenue line; a PURCHASED one does")
    func familySharedIsNoSale() throws {
        func entry(_ ownership: String, _ id: String) throws -> EvidenceEntry {
            let json = #"{"transaction_id":"\#(id)","original_transaction_id":"\#(id)","product_id":"\#(Given.removeAds)","quantity":"1","purchase_date_ms":"1700000000000","in_app_ownership_type":"\#(ownership)"}"#
            return EvidenceEntry(try JSONDecoder().decode(ReceiptTransaction.self, from: Data(json.utf8)), inApp: true)
        }
        let place = EventPlace(position: 1, recordedAtMs: Given.t0)
        for (ownership, id, sales) in [("FAMILY_SHARED", "F1", 0), ("PURCHASED", "P1", 1)] {
            let decision = PurchaseDecider.decide(
                Given.submission(transaction: id), evidence: Given.evidence(try entry(ownership, id)), context: Given.context())
            let delivered = try #require(decision.appended(to: Streams.transaction(id))?.event?.asDelivered, "\(ownership)")
            #expect(delivered.familyShared == (ownership == "FAMILY_SHARED" ? true : nil))
            #expect(RevenueProjection().changes(for: .purchaseDelivered(delivered), at: place).count == sales, "\(ownership)")
        }
    }
}
