@testable import Ledger
@testable import LedgerService
import Postgres
import Testing

/// The 15% rate from a subscription's second year of paid service depends on the sales before
/// each one; Apple's lists are not sorted and clients post out of order, so the lines must come
/// out the same whatever order the sales (and a refund) arrive in.
@Suite("Revenue rates do not depend on the order sales arrive in")
struct RevenueRateOrderTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// Month `i` of subscription `original`: 30 paid days at Apple's 4.99.
    static func sale(_ original: String, _ i: Int) -> RevenueSale {
        let purchased = start + Int64(i) * 30 * day
        return RevenueSale(
            transactionId: "\(original)-\(i)", originalTransactionId: original, productId: "com.example.pro.monthly", kind: .autoRenewable,
            userId: "u-\(original)", environment: "Production", purchaseDateMs: purchased, serviceMs: 30 * day, quantity: 1,
            applePrice: Money(minorUnits: 499, currency: "USD"))
    }

    /// `(line_id suffix after the original, reduced_rate)` of one subscription's lines.
    static func rates(_ original: String, on connection: Connection) throws -> [String: Bool] {
        var rates: [String: Bool] = [:]
        for row in try connection.query("""
            SELECT replace(line_id, \(original), ''), reduced_rate FROM projection_revenue_lines
            WHERE original_transaction_id = \(original)
            """) {
            rates[try row.decode(0, as: String.self)] = try row.decode(1, as: Bool.self)
        }
        return rates
    }

    @Test("fourteen months applied newest first, with the last one refunded before the others arrive, rate like the same months in date order")
    func anyOrder() async throws {
        try await LedgerHarness.with { ledger in
            let months = 0..<14
            let rates = try await ledger.pool.withConnection { connection in
                for i in months { try connection.execute(ProjectionSQL.revenueSale(Self.sale("inorder", i))) }
                try connection.execute(ProjectionSQL.revenueRefund("inorder-13", day: "2027-02-20"))
                // Newest first; the refund of month 13 comes before months 0 to 12 are known.
                try connection.execute(ProjectionSQL.revenueSale(Self.sale("reversed", 13)))
                try connection.execute(ProjectionSQL.revenueRefund("reversed-13", day: "2027-02-20"))
                for i in months.dropLast().reversed() { try connection.execute(ProjectionSQL.revenueSale(Self.sale("reversed", i))) }
                return (try Self.rates("inorder", on: connection), try Self.rates("reversed", on: connection))
            }
            #expect(rates.0.count == 15, "fourteen sales and a refund: \(rates.0)")
            #expect(rates.0 == rates.1)
            // Month 13 has 13 × 30 = 390 paid days behind it, month 12 only 360: the sale of
            // month 13 and its refund alone take the reduced rate.
            #expect(rates.0.filter(\.value).keys.sorted() == ["refund:-13", "sale:-13"])
        }
    }
}
