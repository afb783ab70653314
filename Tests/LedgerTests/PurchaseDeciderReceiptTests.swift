import Testing

@testable import Ledger

/// docs/architecture.md §4: receipts without a transaction id, renewals in `latest_receipt_info`
/// (not sorted), and refunds (`cancellation_date`) that reverse a grant once.
@Suite("Deciding a purchase: whole receipts, renewals and refunds")
struct PurchaseDeciderReceiptTests {
    @Test("a receipt without transaction id delivers each undelivered in_app transaction, on its open order where one matches, else to the submitting user as no_order")
    func receiptWithoutTransactionId() {
        let decision = PurchaseDecider.decide(
            Given.submission(),
            evidence: Given.evidence(
                Given.entry("C1", Given.coins, purchasedAt: Given.t0 + Given.minute),
                Given.entry("C2", Given.coins, purchasedAt: Given.t0 + 2 * Given.minute),
                Given.entry("R1", Given.removeAds, purchasedAt: Given.t0 + Given.minute),
                Given.entry("D1", Given.coins, purchasedAt: Given.t0 - Given.day)),
            context: Given.context(
                transactions: [.delivered(Given.delivered("D1", Given.coins, to: Given.alice))],
                openOrders: [Given.order("o-1"), Given.order("o-2", product: Given.removeAds)]))

        #expect(decision.deliveries.map(\.transactionId) == ["C1", "R1", "C2"])
        #expect(decision.deliveries.map(\.orderId) == ["o-1", "o-2", nil])
        #expect(decision.streams == [
            Streams.transaction("C1"), Streams.order("o-1"),
            Streams.transaction("R1"), Streams.order("o-2"), Streams.ownership("R1"),
            Streams.transaction("C2"),
        ])
        let c2 = decision.appends.compactMap { if case .purchaseDelivered(let d)? = $0.events.first, d.transactionId == "C2" { d } else { nil } }
        #expect(c2.map(\.match) == [.noOrder], "why it went to the submitting user is recorded")
    }

    @Test("without a transaction id, a transaction only in latest_receipt_info is not delivered")
    func latestReceiptInfoOnly() {
        let decision = PurchaseDecider.decide(
            Given.submission(),
            evidence: Given.evidence(Given.entry("L1", Given.coins, inApp: false)),
            context: Given.context(openOrders: [Given.order("o-1")]))
        #expect(decision.rejection == .transactionNotInReceipt)
        #expect(decision.appends.isEmpty)
    }

    @Test("renewals in latest_receipt_info of a held subscription, unsorted, are each recorded once, for the owner")
    func renewalsSeen() throws {
        let period = 30 * Given.day
        func renewal(_ id: String, _ n: Int64) -> EvidenceEntry {
            Given.entry(id, Given.monthly, original: "S0", purchasedAt: Given.t0 + n * period,
                        expiresAt: Given.t0 + (n + 1) * period, inApp: false)
        }
        let original = Given.delivered("S0", Given.monthly, to: Given.alice, purchasedAt: Given.t0, expiresAt: Given.t0 + period)
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "S0"),
            evidence: Given.evidence(
                Given.entry("S0", Given.monthly, purchasedAt: Given.t0, expiresAt: Given.t0 + period),
                renewal("S3", 3), renewal("S1", 1), renewal("S2", 2)),
            context: Given.context(
                transactions: [.delivered(original), .renewal(Given.renewal("S1", of: "S0", to: Given.alice))],
                owners: ["S0": Ownership(userId: Given.alice, streamVersion: 1)]))

        #expect(decision.alreadyDelivered == [Delivery(original)])
        let renewals = decision.appends.filter { $0.event?.asRenewal != nil }
        // In date order, whatever order Apple listed them in.
        #expect(renewals.map(\.stream) == [Streams.transaction("S2"), Streams.transaction("S3")])
        #expect(renewals.allSatisfy { $0.expectation == .noStream })
        #expect(renewals.first?.event?.asRenewal == SubscriptionRenewalSeen(
            transactionId: "S2", originalTransactionId: "S0", productId: Given.monthly, userId: Given.alice,
            environment: "Production", purchaseDateMs: Given.t0 + 2 * period, expiresDateMs: Given.t0 + 3 * period,
            isTrial: false, priceMilliunits: nil, currency: nil, source: Given.submissionId, bundleId: Given.bundleId))

        let observed = try #require(decision.appended(to: Streams.subscription("S0")))
        #expect(observed.expectation == .any)
        #expect(observed.event?.asObserved?.entries.map(\.transactionId) == ["S0", "S3", "S1", "S2"])
    }

    @Test("the first delivery of a subscription records the renewals in the same receipt for its new owner")
    func renewalsOfNewSubscription() {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "S0"),
            evidence: Given.evidence(
                Given.entry("S0", Given.monthly, purchasedAt: Given.t0 + Given.minute, expiresAt: Given.t0 + 30 * Given.day),
                Given.entry("S1", Given.monthly, original: "S0", purchasedAt: Given.t0 + 30 * Given.day, inApp: false)),
            context: Given.context(openOrders: [Given.order("o-1", product: Given.monthly)]))
        #expect(decision.deliveries.map(\.transactionId) == ["S0"])
        #expect(decision.appended(to: Streams.transaction("S1"))?.event?.asRenewal?.userId == Given.alice)
        #expect(decision.appended(to: Streams.ownership("S0"))?.event?.asClaim?.transactionId == "S0")
    }

    @Test("renewals of a subscription nobody holds are not recorded")
    func renewalsOfUnheldSubscription() {
        let appends = PurchaseDecider.observe(
            Given.evidence(Given.entry("S1", Given.monthly, original: "S0", inApp: false)),
            source: "notification-1", context: Given.context())
        #expect(appends.isEmpty)
    }

    @Test("a cancellation date on a delivered transaction records the refund once, taking back what was granted")
    func refundOfDelivered() {
        let appends = PurchaseDecider.observe(
            Given.evidence(Given.entry("C1", Given.coins, quantity: 2, cancelledAt: Given.t0 + Given.day, cancellationReason: 1)),
            source: "notification-1",
            context: Given.context(transactions: [.delivered(Given.delivered("C1", Given.coins, to: Given.alice, quantity: 2))]))
        #expect(appends == [LedgerAppend(
            stream: Streams.refund("C1"), expectation: .noStream,
            events: [.purchaseRefunded(PurchaseRefunded(
                transactionId: "C1", originalTransactionId: "C1", productId: Given.coins, kind: .consumable, quantity: 2,
                userId: Given.alice, environment: "Production", grants: ["coins": 200], refundedAtMs: Given.t0 + Given.day,
                reason: 1, revocation: "refund", source: "notification-1", bundleId: Given.bundleId))])])
    }

    @Test("a resubmitted receipt showing the refund answers already delivered and records the refund")
    func refundOnResubmission() throws {
        let original = Given.delivered("C1", Given.coins, to: Given.alice)
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "C1"),
            evidence: Given.evidence(Given.entry("C1", Given.coins, cancelledAt: Given.t0 + Given.day)),
            context: Given.context(transactions: [.delivered(original)]))
        #expect(decision.alreadyDelivered == [Delivery(original)])
        #expect(decision.streams == [Streams.refund("C1")])
        let refund = try #require(decision.appended(to: Streams.refund("C1")))
        #expect(refund.expectation == .noStream)
        #expect(refund.event?.asRefund?.grants == ["coins": 100])
        #expect(refund.event?.asRefund?.source == Given.submissionId)
    }

    @Test("a refund the ledger already recorded is not recorded again")
    func refundAlreadyRecorded() {
        let appends = PurchaseDecider.observe(
            Given.evidence(Given.entry("C1", Given.coins, cancelledAt: Given.t0 + Given.day)),
            source: "notification-2",
            context: Given.context(
                transactions: [.delivered(Given.delivered("C1", Given.coins, to: Given.alice))], refunded: ["C1"]))
        #expect(appends.isEmpty)
    }

    @Test("an upgrade also sets cancellation_date, but is no refund: a receipt states no amount, so it is recorded as an upgrade that moves no money")
    func upgradeIsNoRefund() throws {
        let appends = PurchaseDecider.observe(
            Given.evidence(
                Given.entry("S0", Given.monthly, purchasedAt: Given.t0, expiresAt: Given.t0 + 30 * Given.day,
                            cancelledAt: Given.t0 + 10 * Given.day, isUpgraded: true),
                Given.entry("Y1", Given.yearly, original: "S0", purchasedAt: Given.t0 + 10 * Given.day,
                            expiresAt: Given.t0 + 375 * Given.day, inApp: false)),
            source: "notification-1",
            context: Given.context(
                transactions: [.delivered(Given.delivered("S0", Given.monthly, to: Given.alice))],
                owners: ["S0": Ownership(userId: Given.alice, streamVersion: 1)]))
        let upgrade = try #require(appends.appended(to: Streams.refund("S0"))?.event?.asRefund)
        #expect(upgrade.upgraded == true && !upgrade.endsAccess)
        #expect(upgrade.refundedFractionMilli == 0 && upgrade.revocationPercentage == nil, "no amount given: none moved")
        #expect(RevenueProjection().changes(for: .purchaseRefunded(upgrade), at: EventPlace(position: 9, recordedAtMs: Given.t0)).isEmpty)
        #expect(appends.filter { $0.event?.asRefund != nil }.count == 1)
        #expect(appends.appended(to: Streams.transaction("Y1"))?.event?.asRenewal?.productId == Given.yearly)
    }

    @Test("a refund of a renewal takes back no grants, from the subscription's owner")
    func refundOfRenewal() throws {
        let appends = PurchaseDecider.observe(
            Given.evidence(Given.entry("S1", Given.monthly, original: "S0", cancelledAt: Given.t0 + 40 * Given.day, inApp: false)),
            source: "notification-1",
            context: Given.context(
                transactions: [.renewal(Given.renewal("S1", of: "S0", to: Given.alice))],
                owners: ["S0": Ownership(userId: Given.alice, streamVersion: 1)]))
        let refund = try #require(appends.appended(to: Streams.refund("S1"))?.event?.asRefund)
        #expect(refund.userId == Given.alice)
        #expect(refund.grants.isEmpty)
        #expect(refund.quantity == 1)
        #expect(refund.kind == .autoRenewable)
        #expect(refund.refundedAtMs == Given.t0 + 40 * Given.day)
    }

    @Test("a Family Sharing revocation is recorded as revoke, not refund")
    func revocation() {
        let appends = PurchaseDecider.observe(
            Given.evidence(Given.entry("R1", Given.removeAds, cancelledAt: Given.t0 + Given.day, isRevocation: true)),
            source: "notification-1",
            context: Given.context(transactions: [.delivered(Given.delivered("R1", Given.removeAds, to: Given.alice))]))
        #expect(appends.appended(to: Streams.refund("R1"))?.event?.asRefund?.revocation == "revoke")
    }

    @Test("Monza's refunded body: the delivered original's refund is recorded at Apple's cancellation_date_ms")
    func refundInRealBody() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-subscription-cancellation_reason-monza.json")
        let original = Given.delivered("1000000218147500", "com.example.product_id", to: Given.alice, kind: .autoRenewable)
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "1000000218147500"), evidence: evidence,
            context: Given.context(
                transactions: [.delivered(original)],
                owners: ["1000000218147500": Ownership(userId: Given.alice, streamVersion: 1)],
                catalog: Catalog(products: [Product(productId: "com.example.product_id", kind: .autoRenewable)])))

        #expect(decision.alreadyDelivered == [Delivery(original)])
        let refund = try #require(decision.appended(to: Streams.refund("1000000218147500"))?.event?.asRefund)
        #expect(refund.refundedAtMs == 1_466_127_848_000)
        #expect(refund.reason == 0)
        #expect(refund.revocation == "refund")
        #expect(refund.environment == "Sandbox")
        #expect(decision.appended(to: Streams.transaction("1000000218147651"))?.event?.asRenewal?.userId == Given.alice)
    }
}
