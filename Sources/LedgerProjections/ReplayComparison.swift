import AppStore
import Foundation
import Ledger
import Postgres

/// Compares the live projections with rebuilt ones: the balances, subscriptions and revenue
/// totals that would change (old → new), and how many rows of the other tables differ.
struct ReplayComparison {
    let live: String
    let shadow: String
    /// The instant subscription statuses are told for, in milliseconds since 1970 (UTC).
    let now: Int64

    func changes(admin: ConnectionPool, livePool: ConnectionPool, shadowPool: ConnectionPool) async throws -> [String] {
        var lines: [String] = []
        lines += try await balances(admin)
        lines += try await subscriptions(admin, livePool: livePool, shadowPool: shadowPool)
        lines += try await revenue(admin)
        lines += try await otherTables(admin)
        return lines
    }

    private func balances(_ pool: ConnectionPool) async throws -> [String] {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT coalesce(n.user_id, o.user_id), coalesce(n.unit, o.unit), o.amount, n.amount, coalesce(n.bundle_id, o.bundle_id)
                FROM \(identifier: live).projection_app_balances o
                FULL OUTER JOIN \(identifier: shadow).projection_app_balances n
                    ON n.bundle_id = o.bundle_id AND n.user_id = o.user_id AND n.unit = o.unit
                WHERE o.amount IS DISTINCT FROM n.amount ORDER BY 5, 1, 2
                """).map { row in
                let old: Int64? = try row.decode(2), new: Int64? = try row.decode(3)
                return "balance of user \(try row.decode(0, as: String.self)) in \(try row.decode(4, as: String.self)), \(try row.decode(1, as: String.self)): "
                    + "\(old.map(String.init) ?? "none") → \(new.map(String.init) ?? "none")"
            }
        }
    }

    private func subscriptions(_ pool: ConnectionPool, livePool: ConnectionPool, shadowPool: ConnectionPool) async throws -> [String] {
        let changed: [String] = try await pool.withConnection { connection in
            try connection.query("""
                SELECT original_transaction_id FROM (
                    (SELECT * FROM \(identifier: live).projection_subscription_entries EXCEPT SELECT * FROM \(identifier: shadow).projection_subscription_entries)
                    UNION ALL (SELECT * FROM \(identifier: shadow).projection_subscription_entries EXCEPT SELECT * FROM \(identifier: live).projection_subscription_entries)) e
                UNION
                SELECT original_transaction_id FROM (
                    (SELECT * FROM \(identifier: live).projection_subscription_renewals EXCEPT SELECT * FROM \(identifier: shadow).projection_subscription_renewals)
                    UNION ALL (SELECT * FROM \(identifier: shadow).projection_subscription_renewals EXCEPT SELECT * FROM \(identifier: live).projection_subscription_renewals)) r
                ORDER BY 1
                """).map { try $0.decode(0) }
        }
        var lines: [String] = []
        func describe(_ summary: SubscriptionSummary?) -> String {
            guard let summary else { return "none" }
            return "\(summary.status.rawValue), expires \(summary.expiresAtMs.map(RevenueDay.iso8601) ?? "never")"
        }
        // A chunk at a time, two queries a side: a rebuild may change every subscription.
        for start in stride(from: 0, to: changed.count, by: 1_000) {
            let chunk = Array(changed[start..<min(start + 1_000, changed.count)])
            let old = try await livePool.withConnection { try SubscriptionSummaries.read(of: chunk, on: $0, now: now) }
            let new = try await shadowPool.withConnection { try SubscriptionSummaries.read(of: chunk, on: $0, now: now) }
            for original in chunk {
                lines.append("subscription \(original): \(describe(old[original])) → \(describe(new[original]))")
            }
        }
        return lines
    }

    private func revenue(_ pool: ConnectionPool) async throws -> [String] {
        func totals(_ schema: String) -> SQL {
            """
            SELECT environment, currency, day,
                   coalesce(sum(gross_minor) FILTER (WHERE line_type = 'sale'), 0)::bigint AS gross,
                   coalesce(-sum(gross_minor) FILTER (WHERE line_type IN ('refund', 'reversal')), 0)::bigint AS refunded,
                   sum(gross_minor)::bigint AS net,
                   coalesce(sum(gross_minor) FILTER (WHERE reduced_rate), 0)::bigint AS reduced
            FROM \(identifier: schema).projection_revenue_lines GROUP BY 1, 2, 3
            """
        }
        let old = totals(live), new = totals(shadow)
        return try await pool.withConnection { connection in
            try connection.query("""
                WITH o AS (\(fragment: old)), n AS (\(fragment: new))
                SELECT coalesce(n.environment, o.environment), coalesce(n.currency, o.currency), to_char(coalesce(n.day, o.day), 'YYYY-MM-DD'),
                       o.gross, n.gross, o.refunded, n.refunded, o.net, n.net, o.reduced, n.reduced
                FROM o FULL OUTER JOIN n ON n.environment = o.environment AND n.currency = o.currency AND n.day = o.day
                WHERE (o.gross, o.refunded, o.net, o.reduced) IS DISTINCT FROM (n.gross, n.refunded, n.net, n.reduced)
                ORDER BY 1, 2, 3
                """).map { row in
                let currency: String = try row.decode(1)
                func money(_ index: Int) throws -> String {
                    try row.decode(index, as: Int64?.self).map { Money(minorUnits: $0, currency: currency).decimal } ?? "none"
                }
                // Net at the reduced (15%) rate moves the commission even when the totals stay.
                let reduced = try row.decode(9, as: Int64?.self) == row.decode(10, as: Int64?.self)
                    ? "" : ", net at the reduced rate \(try money(9)) → \(try money(10))"
                return "revenue \(try row.decode(0, as: String.self)) \(currency) \(try row.decode(2, as: String.self)): "
                    + "gross \(try money(3)) → \(try money(4)), refunded \(try money(5)) → \(try money(6)), net \(try money(7)) → \(try money(8))"
                    + reduced
            }
        }
    }

    /// The tables whose differences the lines above may not tell (revenue lines too: a line
    /// can change its user or product and leave every day's totals as they were).
    private func otherTables(_ pool: ConnectionPool) async throws -> [String] {
        let tables = ["projection_entitlements", "projection_ownership", "projection_ownership_history", "projection_apple_account_members",
                      "projection_revenue_catalog_prices", "projection_revenue_lines", "projection_revenue_transaction_info", "projection_timeline_events",
                      "projection_timeline_links"]
        return try await pool.withConnection { connection in
            try tables.compactMap { table in
                let differing: Int64 = try connection.query("""
                    SELECT count(*) FROM (
                        (SELECT * FROM \(identifier: live).\(identifier: table) EXCEPT ALL SELECT * FROM \(identifier: shadow).\(identifier: table))
                        UNION ALL (SELECT * FROM \(identifier: shadow).\(identifier: table) EXCEPT ALL SELECT * FROM \(identifier: live).\(identifier: table))) d
                    """)[0].decode(0)
                return differing == 0 ? nil : "\(table): \(differing) rows differ"
            }
        }
    }

    /// Rows and an order-independent md5 per table: the md5 of the row count and the sum of
    /// each row's text's md5 (its first 64 bits, summed exactly as numeric). A sum, not the
    /// md5s sorted and joined: sorting every row's hash would be a large part of a dry run
    /// (docs/benchmarks.md, 'Why the code is shaped so').
    static func checksums(of schema: String, tables: [String], on pool: ConnectionPool) async throws -> [(table: String, rows: Int64, md5: String)] {
        try await pool.withConnection { connection in
            try tables.map { table in
                let row = try connection.query("""
                    SELECT count(*), md5(count(*)::text || ':' || coalesce(sum(h), 0)::text)
                    FROM (SELECT ('x' || left(md5(t::text), 16))::bit(64)::bigint::numeric AS h
                          FROM \(identifier: schema).\(identifier: table) t) rows
                    """)[0]
                return (table, try row.decode(0), try row.decode(1))
            }
        }
    }
}
