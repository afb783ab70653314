import Testing

@testable import Ledger

/// Projections are pure: each maps an event to row changes.
@Suite("Projections: balances and entitlements")
struct ProjectionTests {
    static func refund(
        _ transactionId: String, _ productId: String, kind: ProductKind, grants: [String: Int64] = [:], atDay day: Int64 = 1
    ) -> PurchaseRefunded {
        PurchaseRefunded(
            transactionId: transactionId, originalTransactionId: transactionId, productId: productId, kind: kind, quantity: 1,
            userId: Given.alice, environment: "Production", grants: grants, refundedAtMs: Given.t0 + day * Given.day,
            reason: 0, revocation: "refund", source: "notification-1")
    }

    /// Balances as `ProjectionBatch` keeps them: the sum of the deltas per app, user and unit
    /// (an event recorded before several apps under "legacy").
    static func appBalances(after events: [LedgerEvent]) -> [String: Int64] {
        var balances: [String: Int64] = [:]
        for event in events {
            for case .addToBalance(let app, let user, let unit, let delta) in BalancesProjection().changes(for: event) {
                balances["\(app ?? "legacy")/\(user)/\(unit)", default: 0] += delta
            }
        }
        return balances
    }

    /// The same per user and unit, for stories of one app (some of whose events were recorded
    /// before several apps, and some by the decider, naming it).
    static func balances(after events: [LedgerEvent]) -> [String: Int64] {
        var balances: [String: Int64] = [:]
        for (key, amount) in appBalances(after: events) { balances[String(key.drop { $0 != "/" }.dropFirst()), default: 0] += amount }
        return balances
    }

    @Test("a delivery credits what it granted, one change per unit, in unit order")
    func deliveryCredits() {
        var delivered = Given.delivered("C1", Given.coins, to: Given.alice, quantity: 2)
        #expect(BalancesProjection().changes(for: .purchaseDelivered(delivered)) == [
            .addToBalance(bundleId: nil, userId: Given.alice, unit: "coins", delta: 200)
        ])
        delivered.grants = ["gems": 5, "coins": 200]
        #expect(BalancesProjection().changes(for: .purchaseDelivered(delivered)) == [
            .addToBalance(bundleId: nil, userId: Given.alice, unit: "coins", delta: 200),
            .addToBalance(bundleId: nil, userId: Given.alice, unit: "gems", delta: 5),
        ])
    }

    @Test("a consumable's refund debits what it granted, and the balance may go negative")
    func consumableRefundDebits() {
        let refund = Self.refund("C1", Given.coins, kind: .consumable, grants: ["coins": 300])
        #expect(BalancesProjection().changes(for: .purchaseRefunded(refund)) == [
            .addToBalance(bundleId: nil, userId: Given.alice, unit: "coins", delta: -300)
        ])
        // 100 coins delivered, then a refund of a 300-coin purchase whose coins were spent.
        let balances = Self.balances(after: [
            .purchaseDelivered(Given.delivered("C2", Given.coins, to: Given.alice)), .purchaseRefunded(refund),
        ])
        #expect(balances == ["\(Given.alice)/coins": -200])
    }

    @Test("balances are per app: the same user's coins bought in two apps, refunded and spent in each, never mix")
    func balancesPerApp() {
        var game = Given.delivered("G1", Given.coins, to: Given.alice)
        game.bundleId = "com.acme.game"
        var puzzle = Given.delivered("P1", Given.coins, to: Given.alice, quantity: 3)
        puzzle.bundleId = "com.acme.puzzle"
        var refund = Self.refund("P1", Given.coins, kind: .consumable, grants: ["coins": 300])
        refund.bundleId = "com.acme.puzzle"
        let spend = BalanceSpent(
            userId: Given.alice, unit: "coins", amount: 40, spendId: "s-1", reason: nil, balanceAfter: 60, attributions: [],
            spentAtMs: Given.t0, bundleId: "com.acme.game")
        let balances = Self.appBalances(after: [.purchaseDelivered(game), .purchaseDelivered(puzzle), .balanceSpent(spend), .purchaseRefunded(refund)])
        #expect(balances == ["com.acme.game/\(Given.alice)/coins": 60, "com.acme.puzzle/\(Given.alice)/coins": 0])
        // A reversal gives back to the app its refund took from.
        let reversed = Self.appBalances(after: [.refundReversed(RefundReversed(refund: refund, reversedAtMs: Given.t0 + 2 * Given.day, source: "n-2"))])
        #expect(reversed == ["com.acme.puzzle/\(Given.alice)/coins": 300])
    }

    @Test("refunds of owned products, and events that grant nothing, leave balances alone",
          arguments: [ProductKind.nonConsumable, .autoRenewable, .nonRenewing])
    func ownedRefundsLeaveBalances(kind: ProductKind) {
        #expect(BalancesProjection().changes(for: .purchaseRefunded(Self.refund("R1", Given.removeAds, kind: kind, grants: ["gems": 5]))).isEmpty)
        #expect(BalancesProjection().changes(for: .orderCreated(Given.order("o-1"))).isEmpty)
        #expect(BalancesProjection().changes(for: .purchaseDelivered(Given.delivered("R1", Given.removeAds, to: Given.alice))).isEmpty)
    }

    @Test("entitlements: a claim sets the owner, a transfer moves it")
    func claimAndTransfer() {
        let projection = EntitlementsProjection()
        #expect(projection.changes(for: .ownershipClaimed(OwnershipClaimed(
            originalTransactionId: "T1", productId: Given.removeAds, kind: .nonConsumable, userId: Given.alice,
            transactionId: "T1", environment: "Production"))) == [
            .setOwner(originalTransactionId: "T1", bundleId: nil, userId: Given.alice, productId: Given.removeAds, kind: .nonConsumable, environment: "Production")
        ])
        #expect(projection.changes(for: .ownershipTransferred(OwnershipTransferred(
            originalTransactionId: "T1", productId: Given.removeAds, kind: .nonConsumable, fromUserId: Given.alice,
            toUserId: Given.bob, transactionId: "T2", submissionId: "sub-1", environment: "Sandbox", bundleId: "com.acme.game"))) == [
            .setOwner(originalTransactionId: "T1", bundleId: "com.acme.game", userId: Given.bob, productId: Given.removeAds, kind: .nonConsumable, environment: "Sandbox")
        ])
    }

    @Test("entitlements: refunding a non-consumable revokes it at the refund; other refunds do not")
    func refundRevokes() {
        let projection = EntitlementsProjection()
        #expect(projection.changes(for: .purchaseRefunded(Self.refund("T1", Given.removeAds, kind: .nonConsumable, atDay: 3))) == [
            .revokeOwnership(originalTransactionId: "T1", atMs: Given.t0 + 3 * Given.day)
        ])
        #expect(projection.changes(for: .purchaseRefunded(Self.refund("T1", "com.example.season", kind: .nonRenewing))) == [
            .revokeOwnership(originalTransactionId: "T1", atMs: Given.t0 + Given.day)
        ])
        #expect(projection.changes(for: .purchaseRefunded(Self.refund("C1", Given.coins, kind: .consumable))).isEmpty)
        #expect(projection.changes(for: .purchaseRefunded(Self.refund("S1", Given.monthly, kind: .autoRenewable))).isEmpty)
        #expect(projection.changes(for: .purchaseDelivered(Given.delivered("T1", Given.removeAds, to: Given.alice))).isEmpty)
    }

    @Test("subscriptions: only auto-renewable deliveries become subscription entries")
    func subscriptionEntries() {
        let projection = SubscriptionsProjection()
        #expect(projection.changes(for: .purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice))).isEmpty)
        let delivered = Given.delivered("S0", Given.monthly, to: Given.alice, purchasedAt: Given.t0, expiresAt: Given.t0 + 30 * Given.day)
        #expect(projection.changes(for: .purchaseDelivered(delivered)) == [
            .mergeSubscriptionEntry(originalTransactionId: "S0", environment: "Production", entry: SubscriptionEntry(
                transactionId: "S0", productId: Given.monthly, purchaseDateMs: Given.t0, expiresDateMs: Given.t0 + 30 * Given.day,
                cancellationDateMs: nil, isTrial: false, isUpgraded: false))
        ])
    }

    @Test("every projection has its own name and tables")
    func names() {
        #expect(Projections.all.map { $0.name } == ["app_balances", "entitlements", "subscriptions", "ownership", "revenue", "timelines", "webhook_events", "subscription_history"])
        let tables = Projections.all.flatMap { $0.tables }
        #expect(Set(tables).count == tables.count)
    }
}
