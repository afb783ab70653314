import Testing

@testable import Ledger

/// Rules that were wrong in the first decider (each found by reading it against docs/architecture.md §4)
/// and are pinned here so they stay fixed.
@Suite("Deciding a purchase: the edge cases that were once wrong")
struct PurchaseDeciderEdgeCaseTests {
    @Test("after a transfer, the same transaction resubmitted is already delivered, not delivered again")
    func transferThenResubmit() throws {
        // Bob restores Alice's non-consumable on his device: a new transaction T2 of original T1.
        let evidence = Given.evidence(Given.entry("T2", Given.removeAds, original: "T1"))
        let before = Given.context(transferPolicy: .transfer, owners: ["T1": Ownership(userId: Given.alice, streamVersion: 1)])
        let first = PurchaseDecider.decide(Given.submission(by: Given.bob, transaction: "T2"), evidence: evidence, context: before)
        #expect(first.deliveries.map(\.transactionId) == ["T2"])
        #expect(first.streams == [Streams.transaction("T2"), Streams.ownership("T1")])
        let claimed = try #require(first.appended(to: Streams.transaction("T2"))?.event?.asDelivered)
        #expect(claimed.match == .transferred)
        #expect(claimed.grants.isEmpty)

        // What the service loads once `first` is appended: T2 is Bob's, and Bob holds T1.
        var after = before
        after.owners["T1"] = Ownership(userId: Given.bob, streamVersion: 2)
        after.transactions["T2"] = .delivered(claimed)
        let second = PurchaseDecider.decide(
            Given.submission(by: Given.bob, transaction: "T2", id: "sub-2"), evidence: evidence, context: after)
        #expect(second.deliveries.isEmpty)
        #expect(second.alreadyDelivered.map(\.transactionId) == ["T2"])
    }

    @Test("a renewal first seen already refunded has its refund recorded in the same decision (Monza's body)")
    func refundedRenewalFirstSeen() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-subscription-cancellation_reason-monza.json")
        let appends = PurchaseDecider.observe(
            evidence, source: "notification-1",
            context: Given.context(
                transactions: [.delivered(Given.delivered("1000000218147500", "com.example.product_id", to: Given.alice, kind: .autoRenewable))],
                owners: ["1000000218147500": Ownership(userId: Given.alice, streamVersion: 1)],
                catalog: Catalog(products: [Product(productId: "com.example.product_id", kind: .autoRenewable)])))
        #expect(appends.appended(to: Streams.transaction("1000000218147651"))?.event?.asRenewal != nil)
        #expect(appends.appended(to: Streams.refund("1000000218147500")) != nil)
        #expect(appends.appended(to: Streams.refund("1000000218147651"))?.event?.asRefund?.refundedAtMs == 1_466_127_848_000)
    }

    @Test("restoring a non-consumable that grants units does not credit them again")
    func restoreDoesNotGrantAgain() throws {
        let pack = Product(productId: "com.example.starterpack", kind: .nonConsumable, grants: ["gems": 500])
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T2"),
            evidence: Given.evidence(Given.entry("T2", pack.productId, original: "T1")),
            context: Given.context(
                owners: ["T1": Ownership(userId: Given.alice, streamVersion: 1)],
                catalog: Catalog(products: [pack])))
        let delivered = try #require(decision.appended(to: Streams.transaction("T2"))?.event?.asDelivered)
        #expect(delivered.match == .restore)
        #expect(BalancesProjection().changes(for: .purchaseDelivered(delivered)).isEmpty)
    }

    @Test("under transfer, a transaction Apple refunded does not move to the submitting user")
    func transferOfRefunded() {
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob, transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.removeAds, cancelledAt: Given.t0 + Given.day)),
            context: Given.context(
                transferPolicy: .transfer,
                transactions: [.delivered(Given.delivered("T1", Given.removeAds, to: Given.alice))],
                owners: ["T1": Ownership(userId: Given.alice, streamVersion: 1)]))
        #expect(decision.rejection == .transactionRefunded)
        #expect(decision.appended(to: Streams.ownership("T1")) == nil)
    }

    @Test("under transfer, a restore (receipt without transaction id, no order) moves ownership: restoring needs no order")
    func receiptWithoutTransactionIdTransfersOnRestore() {
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob),
            evidence: Given.evidence(Given.entry("R1", Given.removeAds)),
            context: Given.context(
                transferPolicy: .transfer,
                transactions: [.delivered(Given.delivered("R1", Given.removeAds, to: Given.alice))],
                owners: ["R1": Ownership(userId: Given.alice, streamVersion: 1)]))
        #expect(decision.appended(to: Streams.ownership("R1")) != nil)
        #expect(decision.rejection == nil)
        #expect(decision.deliveries.map(\.userId) == [Given.bob])
    }

    @Test("submitting a renewal the ledger already recorded is not answered transaction_not_in_receipt")
    func recordedRenewalResubmitted() {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "S1"),
            evidence: Given.evidence(
                Given.entry("S0", Given.monthly, purchasedAt: Given.t0, expiresAt: Given.t0 + 30 * Given.day),
                Given.entry("S1", Given.monthly, original: "S0", purchasedAt: Given.t0 + 30 * Given.day,
                            expiresAt: Given.t0 + 60 * Given.day)),
            context: Given.context(
                transactions: [
                    .delivered(Given.delivered("S0", Given.monthly, to: Given.alice)),
                    .renewal(Given.renewal("S1", of: "S0", to: Given.alice)),
                ],
                owners: ["S0": Ownership(userId: Given.alice, streamVersion: 1)]))
        #expect(decision.rejection == nil)
    }
}

/// An order whose purchase the ledger learned of first from Apple's notification.
@Suite("Orders fulfilled after a notification recorded their purchase")
struct OrderAfterNotificationTests {
    /// Alice holds S0; a notification recorded her resubscription S5 as a renewal before her
    /// app posted the receipt for the order it created for it.
    static func decide(submission: Submission, token: String?, previous: TransactionRecord) -> Decision {
        let order = Given.order("o-5", product: Given.monthly, createdAt: Given.t0, token: "6f1c2a5e-0000-4000-8000-000000000005")
        return PurchaseDecider.decide(
            submission,
            evidence: Given.evidence(Given.entry("S5", Given.monthly, original: "S0", purchasedAt: Given.t0 + Given.minute, token: token)),
            context: Given.context(
                transactions: [previous], owners: ["S0": Ownership(userId: Given.alice, streamVersion: 1)],
                openOrders: [order], ordersByToken: [order]))
    }

    static var fulfilled: LedgerAppend {
        LedgerAppend(stream: Streams.order("o-5"), expectation: .exactly(1), events: [.orderFulfilled(OrderFulfilled(orderId: "o-5", transactionId: "S5"))])
    }

    @Test("the transaction's app_account_token names the order: already delivered, and the order is fulfilled")
    func byToken() {
        let renewal = Given.renewal("S5", of: "S0", to: Given.alice)
        let decision = Self.decide(
            submission: Given.submission(transaction: "S5"), token: "6f1c2a5e-0000-4000-8000-000000000005", previous: .renewal(renewal))
        #expect(decision.alreadyDelivered == [TransactionRecord.renewal(renewal).delivery])
        #expect(decision.appends.contains(Self.fulfilled))
    }

    @Test("the client names the order: it is fulfilled")
    func byOrderId() {
        let decision = Self.decide(
            submission: Given.submission(transaction: "S5", order: "o-5"), token: nil, previous: .renewal(Given.renewal("S5", of: "S0", to: Given.alice)))
        #expect(decision.appends.contains(Self.fulfilled))
    }

    @Test("product and time alone do not close an order after the fact, nor does a transaction delivered on its own order")
    func weakOrAlreadyOrdered() {
        let weak = Self.decide(
            submission: Given.submission(transaction: "S5"), token: nil, previous: .renewal(Given.renewal("S5", of: "S0", to: Given.alice)))
        #expect(!weak.appends.contains { $0.stream == Streams.order("o-5") })
        let ordered = Given.delivered("S5", Given.monthly, to: Given.alice, original: "S0", orderId: "o-4", match: .orderId)
        let decision = Self.decide(
            submission: Given.submission(transaction: "S5"), token: "6f1c2a5e-0000-4000-8000-000000000005", previous: .delivered(ordered))
        #expect(decision.alreadyDelivered == [Delivery(ordered)])
        #expect(!decision.appends.contains { $0.stream == Streams.order("o-5") })
    }
}
