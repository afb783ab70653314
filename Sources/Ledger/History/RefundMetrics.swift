import Foundation

/// A revenue line as the refunds report reads it.
public struct RevenueLineFact: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case sale, refund, reversal }

    public var kind: Kind
    public var originalTransactionId: String
    /// Milliseconds since 1970, UTC: the start of the line's day (a sale's purchase, a refund's refund).
    public var dayMs: Int64
    /// Signed as the line is: negative for a refund.
    public var money: Money

    public init(kind: Kind, originalTransactionId: String, dayMs: Int64, money: Money) {
        self.kind = kind
        self.originalTransactionId = originalTransactionId
        self.dayMs = dayMs
        self.money = money
    }
}

/// The figures of `GET /v1/reports/refunds` per period: `sales` counts paid transactions
/// (consumables included, free trials not: a sale line with a price), `refunds` the refunds
/// dated in the period (a partial refund is one), `refund_rate` refunds ÷ sales by count
/// rounded half up to 4 decimals (0 without sales), `refunded` what the refunds took back per
/// currency. A reversed refund is not taken off: the refund happened; the revenue report nets it.
public struct RefundMetrics: Sendable {
    public struct Refunded: Sendable, Hashable, Codable {
        public var currency: String
        public var amountMinor: Int64
    }

    public struct Point: Sendable, Hashable, Codable {
        public var period: String
        public var sales: Int
        public var refunds: Int
        /// Exact in base 10 (4 decimals), so the JSON says 0.3333, never 0.33329999.
        public var refundRate: Decimal
        public var refunded: [Refunded]
    }

    public enum Figure: String, Sendable, CaseIterable { case sales, refunds }

    public var points: [Point]
    /// Per period, each figure's original transaction ids, sorted, without repeats.
    public var members: [[Figure: [String]]]

    public init(lines: [RevenueLineFact], periods: [ReportPeriod]) {
        var sales = periods.map { _ in [String]() }
        var refunds = periods.map { _ in [String]() }
        var refunded = periods.map { _ in [String: Int64]() }
        for line in lines {
            // Periods are sorted and back to back: the last one starting at or before the day.
            guard let index = periods.lastIndex(where: { $0.startMs <= line.dayMs }), line.dayMs < periods[index].endMs else { continue }
            switch line.kind {
            case .sale where line.money.minorUnits > 0: sales[index].append(line.originalTransactionId)
            case .refund:
                refunds[index].append(line.originalTransactionId)
                refunded[index][line.money.currency, default: 0] -= line.money.minorUnits
            default: break
            }
        }
        points = periods.indices.map { i in
            Point(
                period: periods[i].label, sales: sales[i].count, refunds: refunds[i].count,
                refundRate: Self.rate(refunds: refunds[i].count, sales: sales[i].count),
                refunded: refunded[i].keys.sorted().map { Refunded(currency: $0, amountMinor: refunded[i][$0]!) })
        }
        members = periods.indices.map { i in
            [.sales: Array(Set(sales[i])).sorted(), .refunds: Array(Set(refunds[i])).sorted()]
        }
    }

    /// refunds ÷ sales as a decimal of 4 places, rounded half up; 0 without sales.
    static func rate(refunds: Int, sales: Int) -> Decimal {
        Decimal(sign: .plus, exponent: -4, significand: Decimal(tenThousandths(refunds: refunds, sales: sales)))
    }

    /// refunds ÷ sales in ten-thousandths, rounded half up; 0 without sales.
    public static func tenThousandths(refunds: Int, sales: Int) -> Int64 {
        guard sales > 0 else { return 0 }
        return (Int64(refunds) * 20_000 + Int64(sales)) / (Int64(sales) * 2)
    }
}
