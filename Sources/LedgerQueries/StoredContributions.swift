import Foundation
import Ledger
import Postgres

/// `history_contributions` as Swift reads and adds to it.
enum StoredContributions {
    /// Where a subscription's rows go: its environment and app.
    struct Place: Hashable, Sendable {
        var environment: String
        var bundleId: String

        func with(_ key: HistoryContributions.Key) -> Row { Row(place: self, key: key) }
    }

    struct Row: Hashable, Sendable {
        var place: Place
        var key: HistoryContributions.Key
    }

    private static let figureColumns = HistoryContributions.Figures.columns

    /// Adds `sums` to the rows (a new row for a key not there), then drops the rows they brought
    /// to nothing: a row of zeros would be a row no subscription adds to.
    static func add(_ sums: [Row: HistoryContributions.Figures], on connection: Connection) throws {
        guard !sums.isEmpty else { return }
        // In key order: two batches adding to the same rows lock them in the same order.
        let rows = sums.sorted { ($0.key.place.environment, $0.key.place.bundleId, $0.key.key) < ($1.key.place.environment, $1.key.place.bundleId, $1.key.key) }
        let keys: [SQL] = [
            "\(PostgresArray(rows.map { Optional($0.key.place.environment) }))::text[]",
            "\(PostgresArray(rows.map { Optional($0.key.key.granularity.rawValue) }))::text[]",
            "\(PostgresArray(rows.map { Optional($0.key.key.productId) }))::text[]",
            "\(PostgresArray(rows.map { Optional($0.key.place.bundleId) }))::text[]",
            "\(PostgresArray(rows.map { Optional($0.key.key.periodDay) }))::bigint[]",
            "\(PostgresArray(rows.map { Optional($0.key.key.currency) }))::text[]",
        ]
        let figures: [SQL] = figureColumns.indices.map { index in "\(PostgresArray(rows.map { Optional($0.value.values[index]) }))::bigint[]" }
        let keyColumns = "environment, granularity, product_id, bundle_id, period_day, currency"
        let columns = keyColumns + ", " + figureColumns.joined(separator: ", ")
        let adding = figureColumns.map { "\($0) = history_contributions.\($0) + excluded.\($0)" }.joined(separator: ", ")
        _ = try connection.execute("""
            INSERT INTO history_contributions (\(unsafeRaw: columns))
            SELECT * FROM unnest(\(fragment: SQL.join(keys + figures, separator: ", ")))
            ON CONFLICT (\(unsafeRaw: keyColumns)) DO UPDATE SET \(unsafeRaw: adding)
            """)
        let zero = figureColumns.map { "c.\($0) = 0" }.joined(separator: " AND ")
        _ = try connection.execute("""
            DELETE FROM history_contributions c
            USING unnest(\(fragment: SQL.join(keys, separator: ", "))) AS k(environment, granularity, product_id, bundle_id, period_day, currency)
            WHERE (c.environment, c.granularity, c.product_id, c.bundle_id, c.period_day, c.currency)
                = (k.environment, k.granularity, k.product_id, k.bundle_id, k.period_day, k.currency)
              AND \(unsafeRaw: zero)
            """)
    }

    /// The summed rows of `environment`, of one app (every app when nil) and one product (""
    /// every product), of `granularity` and the state differences up to `lastDay`, keyed as
    /// `HistoryContributions.points` reads them (product "", apps added up).
    static func read(
        environment: String, bundleId: String?, productId: String, granularity: HistoryContributions.Granularity,
        firstDay: Int64, lastDay: Int64, on connection: Connection
    ) throws -> [HistoryContributions.Key: HistoryContributions.Figures] {
        let sums = figureColumns.map { "sum(\($0))::bigint" }.joined(separator: ", ")
        var rows: [HistoryContributions.Key: HistoryContributions.Figures] = [:]
        for row in try connection.query("""
            SELECT granularity, period_day::bigint, currency, \(unsafeRaw: sums) FROM history_contributions
            WHERE environment = \(environment) AND product_id = \(productId) AND (\(bundleId)::text IS NULL OR bundle_id = \(bundleId))
              AND ((granularity = 'state' AND period_day <= \(lastDay))
                OR (granularity = \(granularity.rawValue) AND period_day BETWEEN \(firstDay) AND \(lastDay)))
            GROUP BY granularity, period_day, currency
            """) {
            guard let kind = HistoryContributions.Granularity(rawValue: try row.decode(0)) else { continue }
            let key = HistoryContributions.Key(productId: "", granularity: kind, periodDay: try row.decode(1), currency: try row.decode(2))
            rows[key] = HistoryContributions.Figures(values: try figureColumns.indices.map { try row.decode(3 + $0) })
        }
        return rows
    }
}

/// A subscription's intervals as `history_subscriptions` keeps them (compact JSON): what its
/// contributions are computed from again when they are taken out.
enum StoredIntervals {
    private struct Stored: Codable {
        var s: String
        var a: Int64
        var b: Int64?
        var p: String
        var m: Int64?
        var c: String?
    }

    private struct Subscription: Codable {
        var o: String
        var i: [Stored]
    }

    static func text(_ life: SubscriptionLife) throws -> String {
        let stored = Subscription(o: life.originalTransactionId, i: life.intervals.map { interval in
            Stored(s: interval.state.rawValue, a: interval.startMs, b: interval.endMs, p: interval.productId,
                   m: interval.monthly?.minorUnits, c: interval.monthly?.currency)
        })
        return String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
    }

    static func life(_ text: String) throws -> SubscriptionLife {
        let stored = try JSONDecoder().decode(Subscription.self, from: Data(text.utf8))
        return SubscriptionLife(originalTransactionId: stored.o, userId: "", intervals: try stored.i.map { interval in
            guard let state = SubscriptionHistory.State(rawValue: interval.s) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown state \(interval.s)"))
            }
            return SubscriptionHistory.Interval(
                state: state, startMs: interval.a, endMs: interval.b, productId: interval.p,
                monthly: zip(interval.m, interval.c).map { Money(minorUnits: $0, currency: $1) })
        })
    }
}

private func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
