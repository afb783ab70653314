import Testing

@testable import Ledger

/// "A function of the set of entries, not of the order they were seen in": checked over 200
/// seeded shuffles, for the summary itself and for the subscriptions projection's merge.
@Suite("Subscription state does not depend on the order Apple's answers arrive in")
struct SubscriptionOrderIndependenceTests {
    static let t0 = Given.t0
    static let day = Given.day
    static let shuffles = 200

    static func entry(
        _ id: String, _ productId: String = Given.monthly, from: Int64?, to: Int64?, cancelledOnDay: Int64? = nil,
        trial: Bool = false, upgraded: Bool = false
    ) -> SubscriptionEntry {
        SubscriptionEntry(
            transactionId: id, productId: productId, purchaseDateMs: from.map { t0 + $0 * day },
            expiresDateMs: to.map { t0 + $0 * day }, cancellationDateMs: cancelledOnDay.map { t0 + $0 * day },
            isTrial: trial, isUpgraded: upgraded)
    }

    /// A trial, a refunded renewal, an upgrade away from monthly, and two periods ending at the
    /// same instant (Y3 and X4), so ties have to be broken by transaction id.
    static let entries = [
        entry("S0", from: 0, to: 30, trial: true),
        entry("S1", from: 30, to: 60, cancelledOnDay: 40),
        entry("S2", from: 60, to: 90, cancelledOnDay: 70, upgraded: true),
        entry("Y3", Given.yearly, from: 70, to: 435),
        entry("X4", Given.monthly, from: 405, to: 435),
    ]

    @Test("SubscriptionSummary is the same for every order of the same entries", arguments: [35, 100, 500] as [Int64])
    func summaryIgnoresOrder(onDay day: Int64) throws {
        let now = Self.t0 + day * Self.day
        let renewal = RenewalObservation(
            observedAtMs: now, autoRenew: true, autoRenewProductId: Given.yearly, inBillingRetry: true,
            gracePeriodExpiresMs: Self.t0 + 440 * Self.day)
        let expected = try #require(SubscriptionSummary(entries: Self.entries, renewal: renewal, nowMs: now))
        #expect(expected.productId == Given.yearly)  // Y3 > X4: the tie is broken by transaction id
        #expect(expected.expiresAtMs == Self.t0 + 435 * Self.day)

        var generator = SplitMix64(seed: 0x5EED_0000 + UInt64(day))
        var orders = Set<[String]>()
        var differing: [[String]] = []
        for _ in 0..<Self.shuffles {
            let shuffled = Self.entries.shuffled(using: &generator)
            orders.insert(shuffled.map(\.transactionId))
            if SubscriptionSummary(entries: shuffled, renewal: renewal, nowMs: now) != expected {
                differing.append(shuffled.map(\.transactionId))
            }
        }
        #expect(orders.count > 60, "the shuffles should visit many of the 120 orders")
        #expect(differing.isEmpty, "orders giving another summary: \(differing.prefix(3))")
    }

    /// What Apple showed of subscription S0, as the ledger records it: a delivery, a renewal, three
    /// observations that each know part of the story, a refund, and two events of no concern.
    static let events: [LedgerEvent] = [
        .purchaseDelivered(PurchaseDelivered(
            transactionId: "S0", originalTransactionId: "S0", productId: Given.monthly, kind: .autoRenewable, quantity: 1,
            userId: Given.alice, orderId: "o-1", environment: "Production", purchaseDateMs: t0, expiresDateMs: t0 + 30 * day,
            priceMilliunits: nil, currency: nil, appAccountToken: nil, appTransactionId: nil, isTrial: true, grants: [:],
            submissionId: "sub-1", match: .orderId)),
        .subscriptionRenewalSeen(SubscriptionRenewalSeen(
            transactionId: "S1", originalTransactionId: "S0", productId: Given.monthly, userId: Given.alice,
            environment: "Production", purchaseDateMs: t0 + 30 * day, expiresDateMs: t0 + 60 * day, isTrial: false,
            priceMilliunits: nil, currency: nil, source: "sub-2")),
        observed([entry("S0", from: 0, to: 30, trial: true), entry("S1", from: 30, to: nil)], renewedOnDay: 31, autoRenew: true),
        observed([entry("S1", from: 30, to: 60), entry("S2", from: 60, to: 90)], renewedOnDay: 61, autoRenew: false),
        observed(
            [entry("S2", from: nil, to: 90, cancelledOnDay: 70, upgraded: true), entry("Y3", Given.yearly, from: 70, to: 435)],
            renewedOnDay: 71, autoRenew: true),
        .purchaseRefunded(PurchaseRefunded(
            transactionId: "S1", originalTransactionId: "S0", productId: Given.monthly, kind: .autoRenewable, quantity: 1,
            userId: Given.alice, environment: "Production", grants: [:], refundedAtMs: t0 + 40 * day, reason: 0,
            revocation: "refund", source: "notification-3")),
        .orderCreated(Given.order("o-1", product: Given.monthly)),
        .purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice)),
    ]

    static func observed(_ entries: [SubscriptionEntry], renewedOnDay day: Int64, autoRenew: Bool) -> LedgerEvent {
        .subscriptionObserved(SubscriptionObserved(
            originalTransactionId: "S0", environment: "Production", entries: entries,
            renewal: RenewalObservation(
                observedAtMs: t0 + day * Self.day, autoRenew: autoRenew, autoRenewProductId: Given.monthly,
                inBillingRetry: false, gracePeriodExpiresMs: nil),
            source: "notification-\(day)"))
    }

    @Test("the subscriptions projection, merged the way ProjectionSQL merges, gives one state for every order of events")
    func projectionIgnoresOrder() {
        func fold(_ events: [LedgerEvent]) -> MergedSubscription {
            var merged = MergedSubscription()
            for event in events {
                for change in SubscriptionsProjection().changes(for: event) { merged.apply(change) }
            }
            return merged
        }
        let expected = fold(Self.events)
        #expect(expected.entries == [
            "S0": Self.entry("S0", from: 0, to: 30, trial: true),
            "S1": Self.entry("S1", from: 30, to: 60, cancelledOnDay: 40),
            "S2": Self.entry("S2", from: 60, to: 90, cancelledOnDay: 70, upgraded: true),
            "Y3": Self.entry("Y3", Given.yearly, from: 70, to: 435),
        ])
        #expect(expected.renewal?.observedAtMs == Self.t0 + 71 * Self.day)
        #expect(expected.summary(onDay: 100)?.status == .active)
        #expect(expected.summary(onDay: 100)?.productId == Given.yearly)

        var generator = SplitMix64(seed: 0x0BAD_5EED)
        var differing = 0
        for _ in 0..<Self.shuffles {
            let merged = fold(Self.events.shuffled(using: &generator))
            let sameSummaries = ([35, 100, 500] as [Int64]).allSatisfy { merged.summary(onDay: $0) == expected.summary(onDay: $0) }
            if merged != expected || !sameSummaries { differing += 1 }
        }
        #expect(differing == 0)
    }
}

/// The rows `ProjectionSQL` keeps for one subscription, in memory: entries merged by transaction
/// id (purchase date, billing plan, commitment field by field, price, currency: first non-null;
/// expiry: greatest; cancellation: least; flags: OR; product: first), and the renewal observation with the newest `observed_at_ms` (the events here never tie).
struct MergedSubscription: Equatable {
    var entries: [String: SubscriptionEntry] = [:]
    var renewal: RenewalObservation?

    mutating func apply(_ change: ProjectionChange) {
        switch change {
        case .mergeSubscriptionEntry(_, _, let e):
            guard var row = entries[e.transactionId] else {
                entries[e.transactionId] = e
                return
            }
            row.purchaseDateMs = row.purchaseDateMs ?? e.purchaseDateMs
            row.expiresDateMs = Self.greatest(row.expiresDateMs, e.expiresDateMs)
            row.cancellationDateMs = Self.least(row.cancellationDateMs, e.cancellationDateMs)
            row.isTrial = row.isTrial || e.isTrial
            row.isUpgraded = row.isUpgraded || e.isUpgraded
            row.billingPlanType = row.billingPlanType ?? e.billingPlanType
            row.commitment = Commitment.merged(row.commitment, e.commitment)
            row.priceMilliunits = row.priceMilliunits ?? e.priceMilliunits
            row.currency = row.currency ?? e.currency
            entries[e.transactionId] = row
        case .observeRenewal(_, let r):
            if renewal.map({ r.observedAtMs > $0.observedAtMs }) ?? true { renewal = r }
        default:
            break
        }
    }

    func summary(onDay day: Int64) -> SubscriptionSummary? {
        SubscriptionSummary(
            entries: entries.values.sorted { $0.transactionId < $1.transactionId }, renewal: renewal,
            nowMs: Given.t0 + day * Given.day)
    }

    /// PostgreSQL's `greatest` and `least` ignore NULLs.
    static func greatest(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a, let b else { return a ?? b }
        return max(a, b)
    }

    static func least(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a, let b else { return a ?? b }
        return min(a, b)
    }
}
