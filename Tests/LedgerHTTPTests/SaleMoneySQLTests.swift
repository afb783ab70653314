import Ledger
@testable import LedgerQueries
import Postgres
import Testing

/// The revenue report sums tax and proceeds in SQL (`RevenueLineMoney`); the rule is
/// `SaleMoney`'s. Both compute the same figures on the same lines: sales, prorated and full
/// refunds and reversals, with and without a point, both plans, both years, quantities.
@Suite("Sale money in SQL agrees with SaleMoney")
struct SaleMoneySQLTests {
    struct Line: Sendable {
        var id: String
        var type: String
        var gross: Int64
        var saleGross: Int64
        var quantity: Int64
        var reduced: Bool
        var fraction: Int64
        var proceeds: Int64?
        var year2: Int64?
    }

    @Test("2,000 generated lines: the SQL's tax and proceeds equal SaleMoney's under both plans")
    func agrees() async throws {
        var generator = SystemRandomNumberGenerator()
        var generated: [Line] = []
        for index in 0..<2_000 {
            let quantity = Int64.random(in: 1...3, using: &generator)
            let unit = Int64.random(in: 1...50_000, using: &generator)
            let saleGross = unit * quantity
            let hasPoint = Int.random(in: 0..<4, using: &generator) != 0
            // Proceeds per unit below and above the price net of 30%, so tax clamps at 0 sometimes.
            let proceeds = hasPoint ? Int64.random(in: 0...unit, using: &generator) : nil
            let year2 = hasPoint && Bool.random(using: &generator) ? proceeds.map { $0 + $0 / 5 } : nil
            let type = ["sale", "refund", "reversal"][index % 3]
            let fraction = type == "sale" ? RefundFraction.whole : [RefundFraction.whole, 25_000, 33_333, 1][Int.random(in: 0..<4, using: &generator)]
            let share = RefundFraction.money(saleGross, fraction)
            generated.append(Line(
                id: "\(type):\(index)", type: type, gross: type == "refund" ? -share : share, saleGross: saleGross, quantity: quantity,
                reduced: Bool.random(using: &generator), fraction: fraction, proceeds: proceeds, year2: year2))
        }
        let lines = generated
        try await LedgerHarness.withMigratedSchema { pool in
            try await pool.withConnection { connection in
                try connection.execute("""
                    INSERT INTO projection_revenue_lines
                        (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
                         purchase_date_ms, currency, gross_minor, reduced_rate, quantity, fraction_milli, sale_gross_minor,
                         point_proceeds_minor, point_proceeds_year2_minor)
                    SELECT id, type, id, id, 'p', 'auto_renewable', 'u', 'Production', DATE '2026-11-01', 0, 'USD', gross, reduced_int = 1,
                           quantity, fraction, CASE WHEN type = 'sale' THEN NULL ELSE sale_gross END, proceeds, year2
                    FROM unnest(\(PostgresArray(lines.map { Optional($0.id) }))::text[], \(PostgresArray(lines.map { Optional($0.type) }))::text[],
                                \(PostgresArray(lines.map(\.gross)))::bigint[], \(PostgresArray(lines.map(\.saleGross)))::bigint[],
                                \(PostgresArray(lines.map(\.quantity)))::bigint[], \(PostgresArray(lines.map { $0.reduced ? 1 : 0 }))::bigint[],
                                \(PostgresArray(lines.map(\.fraction)))::bigint[], \(PostgresArray(lines.map(\.proceeds)))::bigint[],
                                \(PostgresArray(lines.map(\.year2)))::bigint[])
                         AS u(id, type, gross, sale_gross, quantity, reduced_int, fraction, proceeds, year2)
                    """)
                for plan in CommissionPlan.allCases {
                    let rows = try connection.query("""
                        SELECT line_id, \(fragment: RevenueLineMoney.tax(plan))::bigint, \(fragment: RevenueLineMoney.proceeds(plan))::bigint,
                               \(fragment: RevenueLineMoney.estimated)
                        FROM projection_revenue_lines
                        """)
                    #expect(rows.count == lines.count)
                    let byId = Dictionary(uniqueKeysWithValues: lines.map { ($0.id, $0) })
                    var mismatches: [String] = []
                    for row in rows {
                        let line = try #require(byId[try row.decode(0, as: String.self)])
                        let sale = SaleMoney.sale(
                            grossMinor: line.saleGross, quantity: line.quantity, planPercent: plan.percent(reducedRate: line.reduced),
                            pointProceedsMinor: line.proceeds, pointYear2ProceedsMinor: line.year2)
                        let expected = sale.share(lineGrossMinor: line.gross, fractionMilli: line.fraction)
                        let (tax, proceeds, estimated): (Int64, Int64, Bool) = (try row.decode(1), try row.decode(2), try row.decode(3))
                        if tax != expected.taxMinor || proceeds != expected.proceedsMinor || estimated != expected.estimated {
                            mismatches.append("\(plan) \(line): SQL tax \(tax) proceeds \(proceeds), Swift \(expected)")
                        }
                    }
                    #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
                }
            }
        }
    }
}
