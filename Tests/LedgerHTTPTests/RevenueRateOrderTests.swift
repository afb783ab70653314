import AppleSimulator
@testable import Ledger
@testable import LedgerProjections
@testable import LedgerService
import Postgres
import Testing

/// The 15% rate from a subscription's second year of paid service depends on the sales before
/// each one; Apple's lists are not sorted and clients post out of order, so the lines must come
/// out the same whatever order the sales (and a refund) arrive in.
@Suite("The year of paid service behind the 15% rate: any order of arrival, lapses, refunds")
struct RevenueRateOrderTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// Month `i` of subscription `original`: 30 paid days at Apple's 4.99, bought `offsetDays`
    /// plus 30 × `i` days after the start.
    static func sale(_ original: String, _ i: Int, offsetDays: Int64 = 0, name: String? = nil) -> RevenueSale {
        let purchased = start + (offsetDays + Int64(i) * 30) * day
        return RevenueSale(
            transactionId: "\(original)-\(name ?? String(i))", originalTransactionId: original, productId: "com.example.pro.monthly",
            kind: .autoRenewable, userId: "u-\(original)", environment: "Production", purchaseDateMs: purchased, serviceMs: 30 * day,
            quantity: 1, applePrice: Money(minorUnits: 499, currency: "USD"))
    }

    static func add(_ sale: RevenueSale, on connection: Connection) throws {
        for statement in ProjectionSQL.revenueSales([sale]) { try connection.execute(statement) }
    }

    static func refund(_ transaction: String, atDay refundDay: Int64, on connection: Connection) throws {
        for statement in ProjectionSQL.revenueRefund(transaction, atMs: start + refundDay * day) { try connection.execute(statement) }
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

    static func reduced(_ rates: [String: Bool]) -> [String] { rates.filter(\.value).keys.sorted() }

    @Test("fourteen months applied newest first, with the last one refunded before the others arrive, rate like the same months in date order")
    func anyOrder() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let months = 0..<14
            let rates = try await pool.withConnection { connection in
                for i in months { try Self.add(Self.sale("inorder", i), on: connection) }
                try Self.refund("inorder-13", atDay: 415, on: connection)
                // Newest first; the refund of month 13 comes before months 0 to 12 are known.
                try Self.add(Self.sale("reversed", 13), on: connection)
                try Self.refund("reversed-13", atDay: 415, on: connection)
                for i in months.dropLast().reversed() { try Self.add(Self.sale("reversed", i), on: connection) }
                return (try Self.rates("inorder", on: connection), try Self.rates("reversed", on: connection))
            }
            #expect(rates.0.count == 15, "fourteen sales and a refund: \(rates.0)")
            #expect(rates.0 == rates.1)
            // Month 13 has 13 × 30 = 390 paid days behind it, month 12 only 360: the sale of
            // month 13 and its refund alone take the reduced rate.
            #expect(Self.reduced(rates.0) == ["refund:-13", "sale:-13"])
        }
    }

    @Test("a subscriber back more than 60 days after their last paid day starts the year over; back within 60 days, they resume it")
    func lapse() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let rates = try await pool.withConnection { connection in
                // Eleven months (330 paid days, the last one ending on day 330), then fourteen more
                // months from day 420 (a lapse of 90 days) or from day 375 (45 days).
                for (original, offset) in [("lapsed", Int64(420)), ("back", Int64(375))] {
                    for i in 0..<11 { try Self.add(Self.sale(original, i), on: connection) }
                    for k in 0..<14 { try Self.add(Self.sale(original, k, offsetDays: offset, name: "r\(k)"), on: connection) }
                }
                // The same lapsed months, newest first.
                for k in (0..<14).reversed() { try Self.add(Self.sale("lapsed-reversed", k, offsetDays: 420, name: "r\(k)"), on: connection) }
                for i in (0..<11).reversed() { try Self.add(Self.sale("lapsed-reversed", i), on: connection) }
                let lapsed = try Self.rates("lapsed", on: connection)
                let reversed = try Self.rates("lapsed-reversed", on: connection)
                let back = try Self.rates("back", on: connection)
                // A month that arrives late and closes the gap to 60 days (its period ends on day
                // 360, the return is on day 420): the year resumes, and the later lines are rated again.
                try Self.add(Self.sale("lapsed", 11), on: connection)
                return (lapsed, reversed, back, try Self.rates("lapsed", on: connection))
            }
            // After the lapse the count starts over: only the 14th month back (390 days) is reduced.
            #expect(Self.reduced(rates.0) == ["sale:-r13"])
            #expect(rates.0 == rates.1)
            // Back within 60 days: 330 + 30 × k days before month k, so from k = 2 on.
            #expect(Self.reduced(rates.2) == (2..<14).map { "sale:-r\($0)" }.sorted())
            // With the gap closed: 360 + 30 × k days before month k, so from k = 1 on.
            #expect(Self.reduced(rates.3) == (1..<14).map { "sale:-r\($0)" }.sorted())
        }
    }

    @Test("a refunded month stops counting toward the year for sales made after the refund, not for those before it, in any order")
    func refundedMonth() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let rates = try await pool.withConnection { connection in
                for i in 0..<15 { try Self.add(Self.sale("early", i), on: connection) }
                try Self.refund("early-5", atDay: 160, on: connection)
                // Newest first, the refund as soon as its sale is known.
                for i in (5..<15).reversed() { try Self.add(Self.sale("early-reversed", i), on: connection) }
                try Self.refund("early-reversed-5", atDay: 160, on: connection)
                for i in (0..<5).reversed() { try Self.add(Self.sale("early-reversed", i), on: connection) }
                // Refunded on day 450, after every one of these sales was made.
                for i in 0..<15 { try Self.add(Self.sale("late", i), on: connection) }
                try Self.refund("late-5", atDay: 450, on: connection)
                return (try Self.rates("early", on: connection), try Self.rates("early-reversed", on: connection), try Self.rates("late", on: connection))
            }
            // Month 13 has 12 paid months behind it once month 5 is refunded (360 days); month 14 has 13.
            #expect(Self.reduced(rates.0) == ["sale:-14"])
            #expect(rates.0.count == 16)
            #expect(rates.0 == rates.1)
            // A refund after the later sales were made does not change what they were charged.
            #expect(Self.reduced(rates.2) == ["sale:-13", "sale:-14"])
        }
    }

    @Test("sales written as one run (one statement, in any order, with a subscriber's lapse and a second subscription among them) rate like the same sales one at a time")
    func oneRun() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let rates = try await pool.withConnection { connection in
                // One at a time, in date order: eleven months, a lapse of 45 days, fourteen more.
                let months = (0..<11).map { Self.sale("single", $0) } + (0..<14).map { Self.sale("single", $0, offsetDays: 375, name: "r\($0)") }
                for sale in months { try Self.add(sale, on: connection) }
                // The same months as one run, shuffled, with another subscription's months
                // between them and a consumable sale that has no service.
                var run = months.map { sale in
                    var sale = sale
                    sale.transactionId = sale.transactionId.replacingOccurrences(of: "single", with: "run")
                    sale.originalTransactionId = "run"
                    return sale
                } + (0..<14).map { Self.sale("other", $0) }
                run.append(RevenueSale(
                    transactionId: "coins", originalTransactionId: "coins", productId: "com.example.coins100", kind: .consumable, userId: "u-run",
                    environment: "Production", purchaseDateMs: Self.start, serviceMs: nil, quantity: 1, applePrice: Money(minorUnits: 99, currency: "USD")))
                var generator = SeededGenerator(seed: 27)
                run.shuffle(using: &generator)
                for statement in ProjectionSQL.revenueSales(run) { try connection.execute(statement) }
                // A second run repeating a sale already there changes nothing.
                for statement in ProjectionSQL.revenueSales([run[0], run[0]]) { try connection.execute(statement) }
                let lines: Int64 = try connection.query("SELECT count(*) FROM projection_revenue_lines")[0].decode(0)
                return (try Self.rates("single", on: connection), try Self.rates("run", on: connection), try Self.rates("other", on: connection), lines)
            }
            #expect(rates.0.count == 25)
            #expect(rates.0 == rates.1)
            // Back within 60 days: from the second month back on.
            #expect(Self.reduced(rates.1) == (2..<14).map { "sale:-r\($0)" }.sorted())
            // Fourteen months in a row: only the fourteenth (390 days behind it) is reduced.
            #expect(Self.reduced(rates.2) == ["sale:-13"])
            #expect(rates.3 == 25 + 25 + 14 + 1)
        }
    }
}

