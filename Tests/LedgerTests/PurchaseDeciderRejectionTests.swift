import Testing

@testable import Ledger

/// docs/architecture.md §4: what is refused, and "a transaction_id is delivered once, ever".
@Suite("Deciding a purchase: refusals, resubmissions and ownership")
struct PurchaseDeciderRejectionTests {
    @Test("a transaction id the verified receipt does not list is not delivered")
    func transactionNotInReceipt() {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T9"),
            evidence: Given.evidence(Given.entry("T1", Given.coins)),
            context: Given.context(openOrders: [Given.order("o-1")]))
        #expect(decision.rejection == .transactionNotInReceipt)
        #expect(decision.appends.isEmpty)
    }

    @Test("a receipt for another app, or one naming no app, is refused", arguments: ["com.other.app", nil] as [String?])
    func bundleIdMismatch(bundleId: String?) {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins), bundleId: bundleId),
            context: Given.context(openOrders: [Given.order("o-1")]))
        #expect(decision.rejection == .bundleIdMismatch)
        #expect(decision.appends.isEmpty)
    }

    @Test("an iOS 6 body is checked by its bid: Venice's com.foo.bar is not com.example.app")
    func bundleIdMismatchInIOS6Body() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios6-status-21006-latest_expired_receipt_info-venice.json")
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "140000527258824"), evidence: evidence,
            context: Given.context(catalog: Catalog(products: [Product(productId: "com.foo.product1", kind: .autoRenewable)])))
        #expect(decision.rejection == .bundleIdMismatch)
        #expect(decision.appends.isEmpty)
    }

    @Test("a product missing from the catalog is refused")
    func unknownProduct() {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", "com.example.gems500")),
            context: Given.context())
        #expect(decision.rejection == .unknownProduct)
        #expect(decision.appends.isEmpty)
    }

    @Test("resubmitting a delivered transaction answers already delivered with the original delivery, appending nothing")
    func resubmission() {
        let original = Given.delivered("T1", Given.coins, to: Given.alice, orderId: "o-1", match: .orderId)
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1", id: "sub-2"),
            evidence: Given.evidence(Given.entry("T1", Given.coins)),
            context: Given.context(transactions: [.delivered(original)], openOrders: [Given.order("o-9")]))
        #expect(decision == Decision(outcome: .alreadyDelivered([Delivery(original)]), appends: []))
        #expect(decision.alreadyDelivered.map(\.orderId) == ["o-1"])
    }

    @Test("a consumable delivered to one user and submitted by another is refused")
    func consumableOfAnotherUser() {
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob, transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins)),
            context: Given.context(
                transferPolicy: .transfer,
                transactions: [.delivered(Given.delivered("T1", Given.coins, to: Given.alice))]))
        #expect(decision.rejection == .ownedByAnotherUser)
        #expect(decision.appends.isEmpty)
    }

    @Test("under keep, another user's non-consumable is refused: the same transaction or a restore of it",
          arguments: ["T1", "T2"])
    func keepPolicy(transactionId: String) {
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob, transaction: transactionId),
            evidence: Given.evidence(Given.entry("T1", Given.removeAds), Given.entry("T2", Given.removeAds, original: "T1")),
            context: Given.context(
                transferPolicy: .keep,
                transactions: [.delivered(Given.delivered("T1", Given.removeAds, to: Given.alice))],
                owners: ["T1": Ownership(userId: Given.alice, streamVersion: 1)]))
        #expect(decision.rejection == .ownedByAnotherUser)
        #expect(decision.appends.isEmpty)
    }

    @Test("under transfer, ownership moves to the submitting user, expecting the ownership stream's version")
    func transferPolicy() {
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob, transaction: "T2"),
            evidence: Given.evidence(Given.entry("T2", Given.removeAds, original: "T1")),
            context: Given.context(
                transferPolicy: .transfer,
                owners: ["T1": Ownership(userId: Given.alice, streamVersion: 3)]))
        #expect(decision == Decision(
            outcome: .delivered([Delivery(
                transactionId: "T2", originalTransactionId: "T1", productId: Given.removeAds, orderId: nil,
                userId: Given.bob, quantity: 1, environment: "Production")]),
            appends: [
                // The new transaction is claimed for Bob, granting nothing again, so it can never be delivered twice.
                LedgerAppend(
                    stream: Streams.transaction("T2"), expectation: .noStream,
                    events: [.purchaseDelivered(PurchaseDelivered(
                        transactionId: "T2", originalTransactionId: "T1", productId: Given.removeAds, kind: .nonConsumable,
                        quantity: 1, userId: Given.bob, orderId: nil, environment: "Production", purchaseDateMs: Given.t0 + 60_000,
                        expiresDateMs: nil, priceMilliunits: nil, currency: nil, appAccountToken: nil, appTransactionId: nil,
                        isTrial: false, grants: [:], submissionId: Given.submissionId, match: .transferred, bundleId: Given.bundleId))]),
                LedgerAppend(
                stream: Streams.ownership("T1"), expectation: .exactly(3),
                events: [.ownershipTransferred(OwnershipTransferred(
                    originalTransactionId: "T1", productId: Given.removeAds, kind: .nonConsumable,
                    fromUserId: Given.alice, toUserId: Given.bob, transactionId: "T2",
                    submissionId: Given.submissionId, environment: "Production", bundleId: Given.bundleId))])]))
    }

    @Test("under transfer, the delivered transaction itself also moves, and the original delivery stands")
    func transferOfDeliveredTransaction() throws {
        let original = Given.delivered("T1", Given.removeAds, to: Given.alice)
        let evidence = Given.evidence(Given.entry("T1", Given.removeAds))
        let context = Given.context(
            transferPolicy: .transfer, transactions: [.delivered(original)],
            owners: ["T1": Ownership(userId: Given.alice, streamVersion: 1)])

        let first = PurchaseDecider.decide(Given.submission(by: Given.bob, transaction: "T1"), evidence: evidence, context: context)
        let transfer = try #require(first.appended(to: Streams.ownership("T1")))
        #expect(transfer.expectation == .exactly(1))
        #expect(transfer.event?.asTransfer?.toUserId == Given.bob)
        #expect(first.deliveries.map(\.userId) == [Given.bob])
        #expect(first.appended(to: Streams.transaction("T1")) == nil)

        // Bob submits it again once the transfer is recorded: nothing moves, nothing is delivered.
        var after = context
        after.owners["T1"] = Ownership(userId: Given.bob, streamVersion: 2)
        let second = PurchaseDecider.decide(Given.submission(by: Given.bob, transaction: "T1", id: "sub-2"), evidence: evidence, context: after)
        #expect(second == Decision(outcome: .alreadyDelivered([Delivery(original)]), appends: []))
    }

    @Test("a transaction Apple refunded before it was ever delivered is refused transaction_refunded")
    func refundedBeforeDelivery() {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, cancelledAt: Given.t0 + Given.day, cancellationReason: 0)),
            context: Given.context(openOrders: [Given.order("o-1")]))
        #expect(decision.rejection == .transactionRefunded)
        #expect(decision.appends.isEmpty)
    }

    @Test("Monza's refunded renewal 1000000218147651, never delivered, is refused transaction_refunded")
    func refundedBeforeDeliveryInRealBody() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-subscription-cancellation_reason-monza.json")
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "1000000218147651"), evidence: evidence,
            context: Given.context(catalog: Catalog(products: [Product(productId: "com.example.product_id", kind: .autoRenewable)])))
        #expect(decision.rejection == .transactionRefunded)
        #expect(decision.appends.isEmpty)
    }
}
