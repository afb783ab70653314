import Ledger
import Testing

/// The Apple-account facts a decision records, and what the ownership projection makes of them.
@Suite("Apple accounts and ownership, as decided and projected")
struct AppleAccountTests {
    @Test("a receipt of this app listing several purchases records them as one Apple account, before the closing event")
    func receiptRecordsAccount() {
        let submission = Given.submission(transaction: "T3")
        let decision = PurchaseDecider.decide(
            submission,
            evidence: Given.evidence(
                Given.entry("T3", Given.coins), Given.entry("T2", Given.removeAds, original: "T1"), Given.entry("T1", Given.removeAds)),
            context: Given.context())
        let account = AppleAccountObserved(
            submissionId: Given.submissionId, environment: "Production", originalTransactionIds: ["T1", "T3"], appTransactionId: nil)
        #expect(decision.appleAccount == account)
        let closing = decision.closingEvents(for: submission)
        #expect(closing.first == .appleAccountObserved(account))
        #expect(closing.last == decision.closingEvent(for: submission))
    }

    @Test("a single purchase, or another app's receipt, records no Apple account")
    func nothingToRecord() {
        let single = PurchaseDecider.decide(
            Given.submission(transaction: "T1"), evidence: Given.evidence(Given.entry("T1", Given.coins)), context: Given.context())
        #expect(single.appleAccount == nil)
        #expect(single.closingEvents(for: Given.submission(transaction: "T1")).count == 1)
        let foreign = PurchaseDecider.decide(
            Given.submission(transaction: "T1"),
            evidence: Given.evidence(Given.entry("T1", Given.coins), Given.entry("T2", Given.coins), bundleId: "com.other.app"),
            context: Given.context())
        #expect(foreign.appleAccount == nil)
    }

    @Test("ownership changes carry the event's place; owned kinds change hands only through ownership events")
    func ownershipChanges() {
        let projection = OwnershipProjection()
        let place = EventPlace(position: 42, recordedAtMs: Given.t0)
        var coins = Given.delivered("T1", Given.coins, to: Given.alice)
        coins.appTransactionId = "705"
        #expect(projection.changes(for: .purchaseDelivered(coins), at: place) == [
            .linkAppleAccount(originalTransactionIds: ["T1"], appTransactionId: "705"),
            .changeOwner(originalTransactionId: "T1", bundleId: nil, productId: Given.coins, kind: .consumable, environment: "Production",
                         userId: Given.alice, reason: "delivered", place: place),
        ])
        let removeAds = Given.delivered("T2", Given.removeAds, to: Given.alice)
        #expect(projection.changes(for: .purchaseDelivered(removeAds), at: place) == [
            .linkAppleAccount(originalTransactionIds: ["T2"], appTransactionId: nil),
        ])
        let transfer = OwnershipTransferred(
            originalTransactionId: "T2", productId: Given.removeAds, kind: .nonConsumable, fromUserId: Given.alice, toUserId: Given.bob,
            transactionId: "T2", submissionId: "sub-2", environment: "Production")
        #expect(projection.changes(for: .ownershipTransferred(transfer), at: place) == [
            .changeOwner(originalTransactionId: "T2", bundleId: nil, productId: Given.removeAds, kind: .nonConsumable, environment: "Production",
                         userId: Given.bob, reason: "transferred", place: place),
        ])
    }
}
