import Testing

@testable import Ledger

/// docs/architecture.md §4: deliver when the transaction is in the receipt, the bundle matches and the
/// product is known; tie the purchase to the user's order by order id, token, or product and time.
@Suite("Deciding a purchase: delivery and order matching")
struct PurchaseDeciderDeliveryTests {
    @Test("the order the client names is fulfilled, even when a newer open order would match by time")
    func matchedByOrderId() {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1", order: "o-1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins)),
            context: Given.context(openOrders: [
                Given.order("o-1", createdAt: Given.t0),
                Given.order("o-2", createdAt: Given.t0 + 30_000),
            ]))

        let delivered = PurchaseDelivered(
            transactionId: "T1", originalTransactionId: "T1", productId: Given.coins, kind: .consumable, quantity: 1,
            userId: Given.alice, orderId: "o-1", environment: "Production", purchaseDateMs: Given.t0 + Given.minute,
            expiresDateMs: nil, priceMilliunits: nil, currency: nil, appAccountToken: nil, appTransactionId: nil,
            isTrial: false, grants: ["coins": 100], submissionId: Given.submissionId, match: .orderId, bundleId: Given.bundleId)
        #expect(decision == Decision(
            outcome: .delivered([Delivery(
                transactionId: "T1", originalTransactionId: "T1", productId: Given.coins, orderId: "o-1",
                userId: Given.alice, quantity: 1, environment: "Production")]),
            appends: [
                LedgerAppend(stream: Streams.transaction("T1"), expectation: .noStream, events: [.purchaseDelivered(delivered)]),
                LedgerAppend(
                    stream: Streams.order("o-1"), expectation: .exactly(1),
                    events: [.orderFulfilled(OrderFulfilled(orderId: "o-1", transactionId: "T1"))]),
            ]))
    }

    @Test("stream names: one per transaction, order, ownership, refund and subscription")
    func streamNames() {
        #expect(Streams.transaction("1000000218147651") == "transaction-1000000218147651")
        #expect(Streams.order("o-1") == "order-o-1")
        #expect(Streams.ownership("1000000218147500") == "ownership-1000000218147500")
        #expect(Streams.refund("T1") == "refund-T1")
        #expect(Streams.subscription("S0") == "subscription-S0")
        #expect(Streams.submission("sub-1") == "submission-sub-1")
    }

    @Test("the transaction's app_account_token names the user's own open order")
    func matchedByAppAccountToken() throws {
        let first = Given.order("o-1", createdAt: Given.t0, token: "6f1c2a5e-1111-4000-8000-000000000001")
        let second = Given.order("o-2", createdAt: Given.t0 + 30_000, token: "6f1c2a5e-1111-4000-8000-000000000002")
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, token: first.appAccountToken)),
            context: Given.context(openOrders: [first, second], ordersByToken: [first, second]))

        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.orderId == "o-1")
        #expect(delivered.match == .appAccountToken)
        #expect(delivered.appAccountToken == first.appAccountToken)
        #expect(decision.streams == [Streams.transaction("T1"), Streams.order("o-1")])
        #expect(decision.deliveries.map(\.orderId) == ["o-1"])
    }

    @Test("without a token: the latest open order for the product created before the purchase")
    func matchedByProductAndTime() throws {
        let purchasedAt = Given.t0 + Given.minute
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, purchasedAt: purchasedAt)),
            context: Given.context(openOrders: [
                Given.order("o-old", createdAt: Given.t0 - 10 * Given.minute),
                Given.order("o-new", createdAt: Given.t0),
                Given.order("o-ads", product: Given.removeAds, createdAt: Given.t0 + 30_000),
                Given.order("o-later", createdAt: purchasedAt + 20 * Given.minute),
            ]))

        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.orderId == "o-new")
        #expect(delivered.match == .productAndTime)
        #expect(decision.streams == [Streams.transaction("T1"), Streams.order("o-new")])
    }

    @Test("an order created up to five minutes after Apple's purchase time still matches (clock skew)")
    func clockSkew() {
        func orderId(createdMinutesAfterPurchase minutes: Int64) -> String? {
            let decision = PurchaseDecider.decide(
                Given.submission(transaction: "T1"),
                evidence: Given.evidence(Given.entry("T1", Given.coins, purchasedAt: Given.t0)),
                context: Given.context(openOrders: [Given.order("o-1", createdAt: Given.t0 + minutes * Given.minute)]))
            return decision.deliveries.first?.orderId
        }
        #expect(orderId(createdMinutesAfterPurchase: 4) == "o-1")
        #expect(orderId(createdMinutesAfterPurchase: 6) == nil)
    }

    @Test("without a purchase date, the oldest open order for the product")
    func noPurchaseDate() throws {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, purchasedAt: nil)),
            context: Given.context(openOrders: [
                Given.order("o-1", createdAt: Given.t0), Given.order("o-2", createdAt: Given.t0 + Given.minute),
            ]))
        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.orderId == "o-1")
        #expect(delivered.match == .productAndTime)
    }

    @Test("a token of another user's order (the device switched accounts) matches among the user's own orders")
    func accountSwitched() throws {
        let bobs = Given.order("o-bob", user: Given.bob, createdAt: Given.t0, token: "b0b00000-0000-4000-8000-000000000001")
        let alices = Given.order("o-alice", createdAt: Given.t0 - Given.minute)
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, token: bobs.appAccountToken)),
            context: Given.context(openOrders: [alices], ordersByToken: [bobs]))

        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.userId == Given.alice)
        #expect(delivered.orderId == "o-alice")
        #expect(delivered.match == .accountSwitched)
        #expect(decision.appended(to: Streams.order("o-bob")) == nil)
        #expect(decision.deliveries == [Delivery(
            transactionId: "T1", originalTransactionId: "T1", productId: Given.coins, orderId: "o-alice",
            userId: Given.alice, quantity: 1, environment: "Production")])
    }

    @Test("another user's token and no order of one's own: delivered without an order")
    func accountSwitchedWithoutOwnOrder() throws {
        let bobs = Given.order("o-bob", user: Given.bob, token: "b0b00000-0000-4000-8000-000000000001")
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, token: bobs.appAccountToken)),
            context: Given.context(ordersByToken: [bobs]))
        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.userId == Given.alice)
        #expect(delivered.orderId == nil)
        #expect(delivered.match == .noOrder)
        #expect(decision.streams == [Streams.transaction("T1")])
    }

    @Test("with no open order of the user, the purchase goes to the submitting user and the record says why")
    func noOrder() throws {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins)),
            context: Given.context(openOrders: [Given.order("o-bob", user: Given.bob)]))
        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.match == .noOrder)
        #expect(delivered.orderId == nil)
        #expect(delivered.userId == Given.alice)
        #expect(decision.streams == [Streams.transaction("T1")])
        #expect(decision.deliveries.map(\.userId) == [Given.alice])
    }

    @Test("grants are per unit: a quantity of three grants 300 coins")
    func grantsMultiplyByQuantity() throws {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins, quantity: 3)),
            context: Given.context())
        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.grants == ["coins": 300])
        #expect(delivered.quantity == 3)
        #expect(decision.deliveries.map(\.quantity) == [3])
    }

    @Test("ownership is claimed, keyed by original_transaction_id, for owned products only",
          arguments: [Given.coins, Given.removeAds, Given.monthly])
    func ownershipClaimed(productId: String) throws {
        let kind = try #require(Given.catalog[productId]?.kind)
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T2"),
            evidence: Given.evidence(Given.entry("T2", productId, original: "T1", expiresAt: Given.t0 + 30 * Given.day)),
            context: Given.context())

        #expect(decision.deliveries.map(\.transactionId) == ["T2"])
        if kind.isOwned {
            #expect(decision.appended(to: Streams.ownership("T1")) == LedgerAppend(
                stream: Streams.ownership("T1"), expectation: .noStream,
                events: [.ownershipClaimed(OwnershipClaimed(
                    originalTransactionId: "T1", productId: productId, kind: kind, userId: Given.alice,
                    transactionId: "T2", environment: "Production", bundleId: Given.bundleId))]))
        } else {
            #expect(decision.appended(to: Streams.ownership("T1")) == nil)
            #expect(!decision.events.contains { $0.asClaim != nil })
        }
    }

    @Test("the owner restoring on a new device (new transaction id, same original) is a restore, without a new claim")
    func restoreBySameUser() throws {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T2"),
            evidence: Given.evidence(Given.entry("T2", Given.removeAds, original: "T1")),
            context: Given.context(owners: ["T1": Ownership(userId: Given.alice, streamVersion: 1)]))
        let delivered = try #require(decision.appended(to: Streams.transaction("T2"))?.event?.asDelivered)
        #expect(delivered.match == .restore)
        #expect(delivered.userId == Given.alice)
        #expect(delivered.originalTransactionId == "T1")
        #expect(decision.streams == [Streams.transaction("T2")])
    }

    @Test("the submission's stream is closed by what the decision answered")
    func closingEvent() {
        let submission = Given.submission(transaction: "T1")
        let delivered = PurchaseDecider.decide(
            submission, evidence: Given.evidence(Given.entry("T1", Given.coins)), context: Given.context())
        #expect(delivered.closingEvent(for: submission) == .submissionResolved(SubmissionResolved(
            submissionId: Given.submissionId, outcome: "delivered", transactionIds: ["T1"])))

        let rejected = PurchaseDecider.decide(
            submission, evidence: Given.evidence(Given.entry("T1", "com.example.unknown")), context: Given.context())
        guard case .rejected(let code, let message) = rejected.outcome else {
            Issue.record("expected a rejection, got \(rejected.outcome)")
            return
        }
        #expect(rejected.closingEvent(for: submission) == .deliveryRejected(DeliveryRejected(
            submissionId: Given.submissionId, userId: Given.alice, code: code, message: message)))
        #expect(code == .unknownProduct)
    }
}
