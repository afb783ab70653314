import Ledger
import Testing

/// docs/configuration.md "Money": a sale priced by Apple's price point pays that point's proceeds (the
/// year-two figure in a subscription's second year), scaled when the plan's rate differs from the
/// one the point assumes; tax is what the customer paid beyond the proceeds grossed up at that
/// rate; a refund of a share moves that share of each, half up.
@Suite("Sale money: tax, commission and proceeds from a price point")
struct SaleMoneyTests {
    @Test("US 0.99 at the point paying 0.70: proceeds 0.70, no tax, commission 0.29 (the plain 30% would say 0.69)")
    func unitedStates() {
        let money = SaleMoney.sale(grossMinor: 99, quantity: 1, planPercent: 30, pointProceedsMinor: 70, pointYear2ProceedsMinor: nil)
        #expect(money == SaleMoney(taxMinor: 0, commissionMinor: 29, proceedsMinor: 70, estimated: false))
    }

    @Test("DEU 9.99 EUR at the point paying 5.88: tax 9.99 − 5.88 ÷ 0.7 = 1.59, commission 2.52")
    func germany() {
        let money = SaleMoney.sale(grossMinor: 999, quantity: 1, planPercent: 30, pointProceedsMinor: 588, pointYear2ProceedsMinor: 714)
        #expect(money == SaleMoney(taxMinor: 159, commissionMinor: 252, proceedsMinor: 588, estimated: false))
        #expect(money.taxMinor + money.commissionMinor + money.proceedsMinor == 999)
    }

    @Test("a subscription's second year takes proceedsYear2 as it is; the tax it implies is the first year's within a cent")
    func yearTwo() {
        let money = SaleMoney.sale(grossMinor: 999, quantity: 1, planPercent: 15, pointProceedsMinor: 588, pointYear2ProceedsMinor: 714)
        // 7.14 ÷ 0.85 = 8.40: tax 1.59 again.
        #expect(money == SaleMoney(taxMinor: 159, commissionMinor: 126, proceedsMinor: 714, estimated: false))
    }

    @Test("the small-business plan on an in-app purchase scales the 30% figure by 85/70, half up; tax never below 0")
    func smallBusinessScales() {
        // 0.70 × 85 / 70 = 0.85; 0.70 ÷ 0.7 = 1.00 > 0.99: tax 0, not −0.01.
        let us = SaleMoney.sale(grossMinor: 99, quantity: 1, planPercent: 15, pointProceedsMinor: 70, pointYear2ProceedsMinor: nil)
        #expect(us == SaleMoney(taxMinor: 0, commissionMinor: 14, proceedsMinor: 85, estimated: false))
        // 0.59 × 85 / 70 = 0.7164… → 0.72.
        let de = SaleMoney.sale(grossMinor: 99, quantity: 1, planPercent: 15, pointProceedsMinor: 59, pointYear2ProceedsMinor: nil)
        #expect(de.proceedsMinor == 72)
        #expect(de.taxMinor == 99 - 84, "0.59 ÷ 0.7 = 0.842… → 0.84")
    }

    @Test("the point's proceeds are per unit: three units pay three times, the tax is the whole sale's")
    func quantity() {
        let money = SaleMoney.sale(grossMinor: 297, quantity: 3, planPercent: 30, pointProceedsMinor: 59, pointYear2ProceedsMinor: nil)
        #expect(money.proceedsMinor == 177)
        #expect(money.taxMinor == 297 - 253, "1.77 ÷ 0.7 = 2.528… → 2.53")
    }

    @Test("without a point the plan estimates, as before price points: no tax, commission rounded half up")
    func estimated() {
        let money = SaleMoney.sale(grossMinor: 99, quantity: 1, planPercent: 30, pointProceedsMinor: nil, pointYear2ProceedsMinor: nil)
        #expect(money == SaleMoney(taxMinor: 0, commissionMinor: 30, proceedsMinor: 69, estimated: true))
    }

    @Test("a 25% refund moves a quarter of the tax and proceeds, half up, and the rest of its gross is commission; the full refund is the exact opposite")
    func shares() {
        let sale = SaleMoney.sale(grossMinor: 999, quantity: 1, planPercent: 30, pointProceedsMinor: 588, pointYear2ProceedsMinor: nil)
        let quarter = sale.share(lineGrossMinor: -RefundFraction.money(999, 25_000), fractionMilli: 25_000)
        #expect(quarter == SaleMoney(taxMinor: -40, commissionMinor: -63, proceedsMinor: -147, estimated: false))
        let reversal = sale.share(lineGrossMinor: RefundFraction.money(999, 25_000), fractionMilli: 25_000)
        #expect(reversal.proceedsMinor == -quarter.proceedsMinor && reversal.taxMinor == -quarter.taxMinor)
        let full = sale.share(lineGrossMinor: -999, fractionMilli: RefundFraction.whole)
        #expect(full == SaleMoney(taxMinor: -159, commissionMinor: -252, proceedsMinor: -588, estimated: false))
    }
}
