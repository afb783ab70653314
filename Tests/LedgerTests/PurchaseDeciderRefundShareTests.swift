import AppStore
import Foundation
import Testing

@testable import Ledger

/// docs/configuration.md "Money": Apple refunds a share of a purchase (`REFUND_PRORATED`,
/// `revocationPercentage` in thousandths of a percent), ends a family member's access
/// (`FAMILY_REVOKE`) without moving money, and refunds an upgraded subscription's unused share
/// where it states one. Given what the ledger recorded, when Apple's answer shows the revocation,
/// then the event recorded, and what the projections make of it.
@Suite("Refunds of a share, Family Sharing revocations and upgrades")
struct PurchaseDeciderRefundShareTests {
    static let place = EventPlace(position: 7, recordedAtMs: Given.t0)
    static let refundedAt = Given.t0 + 3 * Given.day

    /// Alice's pack of 100 coins, paid 9.99 USD as Apple signed it.
    static func coins() -> PurchaseDelivered {
        var delivered = Given.delivered("C1", Given.coins, to: Given.alice)
        delivered.priceMilliunits = 9_990
        delivered.currency = "USD"
        return delivered
    }

    /// The one refund Apple's answer showing `entry` records, `delivered` recorded before.
    static func refund(
        of entry: EvidenceEntry, given delivered: PurchaseDelivered, owners: [String: Ownership] = [:]
    ) throws -> PurchaseRefunded {
        let appends = PurchaseDecider.observe(
            Given.evidence(entry), source: "notification-1", context: Given.context(transactions: [.delivered(delivered)], owners: owners))
        #expect(appends.filter { $0.event?.asRefund != nil }.count == 1)
        return try #require(appends.appended(to: Streams.refund(entry.transactionId))?.event?.asRefund)
    }

    /// Alice's coins as the balances projection keeps them.
    static func balance(after events: [LedgerEvent]) -> Int64 {
        ProjectionTests.balances(after: events)["\(Given.alice)/coins"] ?? 0
    }

    @Test("a share of money rounds half up, a share of a grant rounds up, and a share reads as a percentage")
    func arithmetic() {
        #expect(RefundFraction.money(999, 25_000) == 250, "249.75")
        #expect(RefundFraction.money(1_099, 50_000) == 550, "549.5")
        #expect(RefundFraction.money(999, 100_000) == 999)
        #expect(RefundFraction.money(999, 0) == 0)
        #expect(RefundFraction.money(-999, 25_000) == -250)
        #expect(RefundFraction.units(100, 33_333) == 34, "33.333")
        #expect(RefundFraction.units(100, 25_000) == 25)
        #expect(RefundFraction.units(100, 0) == 0)
        #expect(RefundFraction.percentText(25_000) == "25%")
        #expect(RefundFraction.percentText(33_333) == "33.333%")
        #expect(RefundFraction.percentText(67_930) == "67.93%")
        #expect(RefundFraction.percentText(500) == "0.5%")
        #expect(RefundFraction.percentText(100_000) == "100%")
    }

    @Test("a 25% prorated refund of a 9.99 sale books -2.50 and takes back 25 of its 100 coins; Apple's fields are kept verbatim")
    func proratedRefund() throws {
        let refund = try Self.refund(
            of: Given.entry("C1", Given.coins, cancelledAt: Self.refundedAt, revocationType: "REFUND_PRORATED", revocationPercentage: 25_000),
            given: Self.coins())
        #expect(refund.rawRevocationType == "REFUND_PRORATED")
        #expect(refund.revocationType == .refundProrated)
        #expect(refund.revocationPercentage == 25_000)
        #expect(refund.refundedFractionMilli == 25_000)
        #expect(refund.revocation == "refund")
        #expect(refund.endsAccess)
        #expect(refund.grants == ["coins": 100], "what the delivery granted, as before")
        #expect(refund.grantsTakenBack == ["coins": 25])
        #expect(RevenueProjection().changes(for: .purchaseRefunded(refund), at: Self.place) == [
            .addRevenueRefund(transactionId: "C1", atMs: Self.refundedAt, fractionMilli: 25_000),
        ])
        // The refund line is that share of the sale's 9.99 (ProjectionSQL computes it as
        // RefundFraction.money does), negated.
        guard case .addRevenueSale(let sale)? = RevenueProjection().changes(for: .purchaseDelivered(Self.coins()), at: Self.place).first,
              let price = sale.applePrice
        else {
            Issue.record("no sale at Apple's price")
            return
        }
        #expect(price == Money(minorUnits: 999, currency: "USD"))
        #expect(Money(minorUnits: -RefundFraction.money(price.minorUnits, refund.fractionMilli), currency: "USD").decimal == "-2.50")
        #expect(Self.balance(after: [.purchaseDelivered(Self.coins()), .purchaseRefunded(refund)]) == 75)
    }

    @Test("100 coins refunded 33.333% take back 34 coins; the reversal gives back exactly those 34 and the share of money taken")
    func proratedConsumableAndReversal() throws {
        let refund = try Self.refund(
            of: Given.entry("C1", Given.coins, cancelledAt: Self.refundedAt, revocationType: "REFUND_PRORATED", revocationPercentage: 33_333),
            given: Self.coins())
        #expect(refund.unitsTakenBack == ["coins": 34])
        #expect(BalancesProjection().changes(for: .purchaseRefunded(refund)) == [.addToBalance(bundleId: Given.bundleId, userId: Given.alice, unit: "coins", delta: -34)])

        let reversedAt = Self.refundedAt + Given.day
        let reversal = try #require(PurchaseDecider.reverse([.purchaseRefunded(refund)], at: reversedAt, source: "notification-2"))
        #expect(reversal.stream == Streams.refund("C1"))
        #expect(reversal.expectation == .exactly(1))
        let reversed = try #require(reversal.event)
        #expect(BalancesProjection().changes(for: reversed) == [.addToBalance(bundleId: Given.bundleId, userId: Given.alice, unit: "coins", delta: 34)])
        #expect(RevenueProjection().changes(for: reversed, at: Self.place) == [
            .addRevenueReversal(transactionId: "C1", atMs: reversedAt, fractionMilli: 33_333),
        ])
        let delivered = LedgerEvent.purchaseDelivered(Self.coins())
        #expect(Self.balance(after: [delivered, .purchaseRefunded(refund)]) == 66)
        #expect(Self.balance(after: [delivered, .purchaseRefunded(refund), reversed]) == 100)

        // What may be spent agrees with the balance: the wallet takes 34 and gives them back.
        var wallet = Wallet(userId: Given.alice, unit: "coins")
        wallet.apply(delivered)
        wallet.apply(.purchaseRefunded(refund))
        #expect(wallet.balance == 66)
        #expect(wallet.attributions(for: 66) == [SpendAttribution(transactionId: "C1", amount: 66)])
        wallet.apply(reversed)
        #expect(wallet.balance == 100)
        #expect(wallet.attributions(for: 100) == [SpendAttribution(transactionId: "C1", amount: 100)])

        // 80 spent before the refund: 20 were left, the refund takes 34 (balance -14), the
        // reversal gives 34 back, and the 20 unspent coins of the purchase can be spent again.
        var spent = Wallet(userId: Given.alice, unit: "coins")
        spent.apply(delivered)
        spent.apply(WalletTests.spent(80, [SpendAttribution(transactionId: "C1", amount: 80)], id: "s1"))
        spent.apply(.purchaseRefunded(refund))
        #expect(spent.balance == -14)
        #expect(spent.attributions(for: 1) == nil)
        spent.apply(reversed)
        #expect(spent.balance == 20)
        #expect(spent.attributions(for: 20) == [SpendAttribution(transactionId: "C1", amount: 20)])
    }

    @Test("FAMILY_REVOKE ends the family member's access and moves no money: no refund line, no balance change")
    func familyRevoke() throws {
        let revoke = try Self.refund(
            of: Given.entry("R1", Given.removeAds, cancelledAt: Self.refundedAt, isRevocation: true, revocationType: "FAMILY_REVOKE"),
            given: Given.delivered("R1", Given.removeAds, to: Given.alice), owners: ["R1": Ownership(userId: Given.alice, streamVersion: 1)])
        #expect(revoke.revocation == "revoke")
        #expect(revoke.revocationType == .familyRevoke)
        #expect(revoke.refundedFractionMilli == 0)
        #expect(RevenueProjection().changes(for: .purchaseRefunded(revoke), at: Self.place).isEmpty)
        #expect(EntitlementsProjection().changes(for: .purchaseRefunded(revoke)) == [
            .revokeOwnership(originalTransactionId: "R1", atMs: Self.refundedAt),
        ])
        #expect(OwnershipProjection().changes(for: .purchaseRefunded(revoke), at: Self.place) == [.changeOwner(
            originalTransactionId: "R1", bundleId: Given.bundleId, productId: Given.removeAds, kind: .nonConsumable, environment: "Production",
            userId: nil, reason: "revoked", place: Self.place)])

        // Of a product that grants units, a revocation takes none back either.
        let coins = try Self.refund(
            of: Given.entry("C1", Given.coins, cancelledAt: Self.refundedAt, isRevocation: true, revocationType: "FAMILY_REVOKE"),
            given: Self.coins())
        #expect(coins.unitsTakenBack.isEmpty)
        #expect(BalancesProjection().changes(for: .purchaseRefunded(coins)).isEmpty)
        #expect(RevenueProjection().changes(for: .purchaseRefunded(coins), at: Self.place).isEmpty)
    }

    @Test("an upgraded transaction's revocation with Apple's percentage (Apple's fixture: REFUND_PRORATED 50000) books that share of its money and keeps access on the new plan")
    func upgradeWithPercentage() throws {
        var signed = try JSONDecoder().decode(
            SignedTransaction.self, from: AppleFixtures.data("jws-decoded-transaction-revocation-prorated-asslib.json"))
        signed.productId = Given.monthly
        let entry = EvidenceEntry(signed: signed)
        #expect(entry.isUpgradedAway)
        #expect(!entry.isRefunded)
        let old = try #require(signed.transactionId)
        let original = try #require(signed.originalTransactionId)
        let revokedAt = try #require(signed.revocationDate)
        var monthly = Given.delivered(
            old, Given.monthly, to: Given.alice, original: original, purchasedAt: signed.purchaseDate, expiresAt: signed.expiresDate)
        monthly.priceMilliunits = signed.price
        monthly.currency = signed.currency

        let upgrade = try Self.refund(of: entry, given: monthly, owners: [original: Ownership(userId: Given.alice, streamVersion: 1)])
        #expect(upgrade.upgraded == true)
        #expect(!upgrade.endsAccess)
        #expect(upgrade.rawRevocationType == "REFUND_PRORATED")
        #expect(upgrade.revocationPercentage == 50_000)
        #expect(upgrade.refundedFractionMilli == 50_000)
        #expect(upgrade.refundedAtMs == revokedAt)

        // Money: half of the old transaction's 10.99, 5.495 booked as 5.50.
        #expect(RevenueProjection().changes(for: .purchaseRefunded(upgrade), at: Self.place) == [
            .addRevenueRefund(transactionId: old, atMs: revokedAt, fractionMilli: 50_000),
        ])
        #expect(RefundFraction.money(1_099, upgrade.fractionMilli) == 550)

        // Access: no holder changes, and the subscription's state is the new plan's.
        #expect(OwnershipProjection().changes(for: .purchaseRefunded(upgrade), at: Self.place).isEmpty)
        guard case .mergeSubscriptionEntry(_, _, var ended)? = SubscriptionsProjection().changes(for: .purchaseRefunded(upgrade)).first else {
            Issue.record("the old transaction's entry is not merged")
            return
        }
        #expect(ended.isUpgraded)
        #expect(ended.cancellationDateMs == revokedAt)
        ended.purchaseDateMs = signed.purchaseDate
        ended.expiresDateMs = signed.expiresDate
        let yearly = SubscriptionEntry(
            transactionId: "Y1", productId: Given.yearly, purchaseDateMs: revokedAt, expiresDateMs: revokedAt + 365 * Given.day,
            cancellationDateMs: nil, isTrial: false, isUpgraded: false)
        let summary = try #require(SubscriptionSummary(entries: [ended, yearly], renewal: nil, nowMs: revokedAt + Given.day))
        #expect(summary.status == .active)
        #expect(summary.productId == Given.yearly)
    }

    @Test("an upgraded transaction's revocation without a percentage is recorded, once, as an upgrade for which Apple gave no amount: no money moves, access stays")
    func upgradeWithoutPercentage() throws {
        let monthly = Given.delivered("S0", Given.monthly, to: Given.alice, purchasedAt: Given.t0, expiresAt: Given.t0 + 30 * Given.day)
        let owners = ["S0": Ownership(userId: Given.alice, streamVersion: 1)]
        func upgraded(_ type: String?) -> EvidenceEntry {
            Given.entry(
                "S0", Given.monthly, purchasedAt: Given.t0, expiresAt: Given.t0 + 30 * Given.day, cancelledAt: Self.refundedAt,
                isUpgraded: true, revocationType: type)
        }
        let upgrade = try Self.refund(of: upgraded(nil), given: monthly, owners: owners)
        #expect(upgrade.upgraded == true)
        #expect(upgrade.revocationPercentage == nil)
        #expect(upgrade.refundedFractionMilli == 0, "the event says no amount was given")
        #expect(RevenueProjection().changes(for: .purchaseRefunded(upgrade), at: Self.place).isEmpty)
        #expect(OwnershipProjection().changes(for: .purchaseRefunded(upgrade), at: Self.place).isEmpty)

        // REFUND_FULL states all of it.
        let full = try Self.refund(of: upgraded("REFUND_FULL"), given: monthly, owners: owners)
        #expect(full.refundedFractionMilli == nil)
        #expect(full.fractionMilli == RefundFraction.whole)

        // Seen again: recorded once.
        let again = PurchaseDecider.observe(
            Given.evidence(upgraded(nil)), source: "notification-2",
            context: Given.context(transactions: [.delivered(monthly)], refunded: ["S0"], owners: owners))
        #expect(again.appended(to: Streams.refund("S0")) == nil)
    }

    @Test("the new fields are stored under their snake_case names; a refund stored before them reads as a refund of everything and is stored as before")
    func storedForm() throws {
        let refund = PurchaseRefunded(
            transactionId: "C1", originalTransactionId: "C1", productId: Given.coins, kind: .consumable, quantity: 1, userId: Given.alice,
            environment: "Production", grants: ["coins": 100], refundedAtMs: Self.refundedAt, reason: 0, revocation: "refund",
            source: "n-1", rawRevocationType: "REFUND_PRORATED", revocationPercentage: 33_333, refundedFractionMilli: 33_333,
            upgraded: true, grantsTakenBack: ["coins": 34])
        let json = String(decoding: try refund.encoded(), as: UTF8.self)
        for field in [
            #""revocation_type":"REFUND_PRORATED""#, #""revocation_percentage":33333"#, #""refunded_fraction_milli":33333"#,
            #""upgraded":true"#, #""grants_taken_back":{"coins":34}"#,
        ] {
            #expect(json.contains(field), "\(json)")
        }
        #expect(try LedgerEvent(type: PurchaseRefunded.eventType, payload: try refund.encoded()) == .purchaseRefunded(refund))

        let stored = #"{"environment":"Production","grants":{"coins":100},"kind":"consumable","original_transaction_id":"C1","product_id":"com.example.coins100","quantity":1,"reason":0,"refunded_at_ms":1700259200000,"revocation":"refund","source":"n-1","transaction_id":"C1","user_id":"user-alice"}"#
        guard case .purchaseRefunded(let before) = try LedgerEvent(type: PurchaseRefunded.eventType, payload: Data(stored.utf8)) else {
            Issue.record("not read as a refund")
            return
        }
        #expect(before.refundedFractionMilli == nil && before.fractionMilli == RefundFraction.whole)
        #expect(before.unitsTakenBack == ["coins": 100])
        #expect(before.endsAccess)
        #expect(String(decoding: try before.encoded(), as: UTF8.self) == stored)
    }
}
