import Ledger
import Testing

/// Revenue's pure parts: days, commission, amounts, and the lines each event makes.
@Suite("Revenue, as projected")
struct RevenueTests {
    @Test("UTC days from milliseconds, across leap days and before 1970")
    func days() {
        #expect(RevenueDay.of(0) == "1970-01-01")
        #expect(RevenueDay.of(-1) == "1969-12-31")
        #expect(RevenueDay.of(951_782_400_000) == "2000-02-29")
        #expect(RevenueDay.of(1_709_251_199_999) == "2024-02-29")
        #expect(RevenueDay.of(1_709_251_200_000) == "2024-03-01")
        #expect(RevenueDay.of(1_795_392_000_000) == "2026-11-23")
        #expect(RevenueDay.iso8601(0) == "1970-01-01T00:00:00.000Z")
        #expect(RevenueDay.iso8601(-1) == "1969-12-31T23:59:59.999Z")
        #expect(RevenueDay.iso8601(1_709_251_199_999) == "2024-02-29T23:59:59.999Z")
        #expect(RevenueDay.iso8601(1_795_431_845_007) == "2026-11-23T11:04:05.007Z")
    }

    @Test("commission rounds half away from zero in integers, and a refund's is its sale's opposite")
    func commission() {
        #expect(CommissionPlan.standard.commission(onMinor: 99, reducedRate: false) == 30)
        #expect(CommissionPlan.standard.commission(onMinor: -99, reducedRate: false) == -30)
        #expect(CommissionPlan.standard.commission(onMinor: 4999, reducedRate: true) == 750)
        #expect(CommissionPlan.smallBusiness.commission(onMinor: 4999, reducedRate: false) == 750)
        #expect(CommissionPlan.standard.commission(onMinor: 50, reducedRate: false) == 15)
        #expect(CommissionPlan.standard.commission(onMinor: 5, reducedRate: true) == 1)
    }

    @Test("amounts print in major units from the integer")
    func decimals() {
        #expect(Money(minorUnits: 99, currency: "USD").decimal == "0.99")
        #expect(Money(minorUnits: -1205, currency: "EUR").decimal == "-12.05")
        #expect(Money(minorUnits: 7, currency: "USD").decimal == "0.07")
        #expect(Money(minorUnits: 120, currency: "JPY").decimal == "120")
    }

    @Test("a paid delivery is a sale at Apple's price, which is already the quantity's total; trials, restores and transfers are no sale; a refund is dated its day")
    func lines() {
        let projection = RevenueProjection()
        let place = EventPlace(position: 1, recordedAtMs: Given.t0)
        var coins = Given.delivered("T1", Given.coins, to: Given.alice, quantity: 3)
        coins.priceMilliunits = 2_970  // three coins packs at 0.99: Apple signs the total
        coins.currency = "USD"
        guard case .addRevenueSale(let sale)? = projection.changes(for: .purchaseDelivered(coins), at: place).first else {
            Issue.record("no sale")
            return
        }
        #expect(sale.applePrice == Money(minorUnits: 297, currency: "USD"))
        #expect(sale.day == RevenueDay.of(Given.t0 + Given.minute))
        var trial = Given.delivered("T2", Given.monthly, to: Given.alice)
        trial.isTrial = true
        #expect(projection.changes(for: .purchaseDelivered(trial), at: place).isEmpty)
        #expect(projection.changes(for: .purchaseDelivered(Given.delivered("T3", Given.removeAds, to: Given.bob, match: .restore)), at: place).isEmpty)
        #expect(projection.changes(for: .purchaseDelivered(Given.delivered("T4", Given.removeAds, to: Given.bob, match: .transferred)), at: place).isEmpty)
        let catalogSale = projection.changes(for: .purchaseDelivered(Given.delivered("T5", Given.coins, to: Given.bob)), at: place)
        guard case .addRevenueSale(let priced)? = catalogSale.first else {
            Issue.record("no sale")
            return
        }
        #expect(priced.applePrice == nil, "without Apple's price the catalog's applies, in SQL, as the log has it then")
        let refund = PurchaseRefunded(
            transactionId: "T1", originalTransactionId: "T1", productId: Given.coins, kind: .consumable, quantity: 3, userId: Given.alice,
            environment: "Production", grants: [:], refundedAtMs: Given.t0 + 40 * Given.day, reason: nil, revocation: "refund", source: "n-1")
        #expect(projection.changes(for: .purchaseRefunded(refund), at: place) == [
            .addRevenueRefund(transactionId: "T1", atMs: Given.t0 + 40 * Given.day),
        ])
    }
}
