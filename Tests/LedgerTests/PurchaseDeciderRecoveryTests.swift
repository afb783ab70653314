import Testing

@testable import Ledger

/// Reconciliation's recovery after a restore (docs/backup-and-restore.md): a purchase Apple knows
/// and the log has no record of goes to the user the log names for it, else waits unclaimed for
/// the first user who submits it; once, ever.
@Suite("Recovering purchases the log lost")
struct PurchaseDeciderRecoveryTests {
    static func events(_ appends: [LedgerAppend]) -> [LedgerEvent] { appends.flatMap(\.events) }

    @Test("the order its token names places it: delivered to that user, the order fulfilled")
    func placedByToken() throws {
        // Given Alice's open order o-1, whose token Apple's transaction carries
        let order = Given.order("o-1")
        var context = Given.context(openOrders: [order], ordersByToken: [order])
        context.transactions = [:]
        // When recovered from a notification
        let appends = PurchaseDecider.recover(
            Given.evidence(Given.entry("T1", Given.coins, token: order.appAccountToken)), source: "recovered:n-1", context: context)
        // Then delivered to Alice, fulfilling o-1, once (a new transaction stream)
        let delivered = try #require(Self.events(appends).compactMap { if case .purchaseDelivered(let d) = $0 { d } else { nil } }.first)
        #expect(delivered.userId == Given.alice)
        #expect(delivered.orderId == "o-1")
        #expect(delivered.grants == ["coins": 100])
        #expect(delivered.submissionId == "recovered:n-1")
        #expect(appends.contains { $0.stream == Streams.transaction("T1") && $0.expectation == .noStream })
        #expect(Self.events(appends).contains(.orderFulfilled(OrderFulfilled(orderId: "o-1", transactionId: "T1"))))
    }

    @Test("the user its Apple account's other purchases went to places it; with nobody to name, it is unclaimed")
    func placedByAccountOrUnclaimed() throws {
        var context = Given.context()
        context.accountUsers = ["T1": Given.bob]
        let appends = PurchaseDecider.recover(
            Given.evidence(Given.entry("T1", Given.coins), Given.entry("T2", Given.coins)), source: "recovered:n-2", context: context)
        let events = Self.events(appends)
        let delivered = events.compactMap { if case .purchaseDelivered(let d) = $0 { d } else { nil } }
        let unclaimed = events.compactMap { if case .purchaseUnclaimed(let u) = $0 { u } else { nil } }
        #expect(delivered.map(\.transactionId) == ["T1"])
        #expect(delivered.first?.userId == Given.bob)
        #expect(unclaimed.map(\.transactionId) == ["T2"])
        #expect(appends.contains { $0.stream == Streams.transaction("T2") && $0.expectation == .noStream })
    }

    @Test("recorded before, delivered or unclaimed: recovery records nothing again")
    func once() throws {
        let unclaimed = PurchaseUnclaimed(
            transactionId: "T2", originalTransactionId: "T2", productId: Given.coins, kind: .consumable, quantity: 1,
            environment: "Production", purchaseDateMs: Given.t0, priceMilliunits: nil, currency: nil, appAccountToken: nil, source: "recovered:n-2")
        let context = Given.context(transactions: [.delivered(Given.delivered("T1", Given.coins, to: Given.alice)), .unclaimed(unclaimed)])
        let appends = PurchaseDecider.recover(
            Given.evidence(Given.entry("T1", Given.coins), Given.entry("T2", Given.coins)), source: "recovered:n-3", context: context)
        #expect(appends.isEmpty)
    }

    @Test("an unclaimed purchase goes to the first user who submits it, at its stream's version 2, granting what it buys")
    func claimedByFirstSubmitter() throws {
        let unclaimed = PurchaseUnclaimed(
            transactionId: "T2", originalTransactionId: "T2", productId: Given.coins, kind: .consumable, quantity: 1,
            environment: "Production", purchaseDateMs: Given.t0, priceMilliunits: nil, currency: nil, appAccountToken: nil, source: "recovered:n-2")
        let decision = PurchaseDecider.decide(
            Given.submission(by: Given.bob, transaction: "T2"), evidence: Given.evidence(Given.entry("T2", Given.coins)),
            context: Given.context(transactions: [.unclaimed(unclaimed)]))
        guard case .delivered(let deliveries) = decision.outcome else {
            Issue.record("not delivered: \(decision.outcome)")
            return
        }
        #expect(deliveries.map(\.userId) == [Given.bob])
        let append = try #require(decision.appends.first { $0.stream == Streams.transaction("T2") })
        #expect(append.expectation == .exactly(1))
        guard case .purchaseDelivered(let delivered) = try #require(append.events.first) else {
            Issue.record("no delivery appended")
            return
        }
        #expect(delivered.grants == ["coins": 100])
    }
}
