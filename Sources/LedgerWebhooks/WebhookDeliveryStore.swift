import Foundation
import Ledger
import Postgres

/// The delivery state of one endpoint in PostgreSQL: its row in `webhook_endpoints` (position,
/// lease, counters), its outstanding messages, and the messages of the projection after its
/// position. Times are the database's (`clock_timestamp()`), so servers on several machines
/// agree on who holds a lease and when a retry is due.
struct WebhookDeliveryStore: Sendable {
    let pool: ConnectionPool
    let endpoint: WebhookEndpoint
    /// This server's name in leases.
    let owner: String
    let lease: Duration

    /// The endpoint's row, made on first start (from the first message: a new endpoint hears
    /// the whole history), its URL kept current.
    func register() async throws {
        let (name, url) = (endpoint.name, endpoint.url.absoluteString)
        try await pool.withConnection { connection in
            _ = try connection.execute("""
                INSERT INTO webhook_endpoints (name, url) VALUES (\(name), \(url))
                ON CONFLICT (name) DO UPDATE SET url = excluded.url
                """)
        }
    }

    /// Takes or renews the lease; false when another server holds it.
    func holdLease() async throws -> Bool {
        let (name, owner, seconds) = (endpoint.name, owner, lease.components.seconds)
        return try await pool.withConnection { connection in
            try connection.execute("""
                UPDATE webhook_endpoints SET lease_owner = \(owner),
                       lease_expires_at = clock_timestamp() + make_interval(secs => \(seconds)::double precision)
                WHERE name = \(name) AND (lease_owner = \(owner) OR lease_owner IS NULL OR lease_expires_at < clock_timestamp())
                """) == 1
        }
    }

    /// Gives the lease up (a server stopping), so another takes over at once.
    func releaseLease() async throws {
        let (name, owner) = (endpoint.name, owner)
        try await pool.withConnection { connection in
            _ = try connection.execute("""
                UPDATE webhook_endpoints SET lease_owner = NULL, lease_expires_at = NULL WHERE name = \(name) AND lease_owner = \(owner)
                """)
        }
    }

    /// Outstanding messages due now, each the earliest of its user's (`limit` users at most). A
    /// published digest's copy (sequence -1, `DigestMessage`) takes its body from `ledger_digests`.
    func dueHeads(limit: Int) async throws -> [(message: WebhookMessage, attempts: Int32)] {
        let name = endpoint.name
        return try await pool.withConnection { connection in
            let rows = try connection.query("""
                SELECT h.position, h.sequence, h.user_key, coalesce(m.body, d.body), h.attempts,
                       coalesce(m.hash_prefix, encode(substring(d.hash FROM 1 FOR 8), 'hex')) FROM (
                    SELECT DISTINCT ON (user_key) position, sequence, user_key, attempts, next_attempt_at
                    FROM webhook_outstanding WHERE endpoint = \(name) ORDER BY user_key, position, sequence
                ) h
                LEFT JOIN projection_webhook_events m ON m.position = h.position AND m.sequence = h.sequence
                LEFT JOIN ledger_digests d ON h.sequence = \(DigestMessage.sequence) AND d.position = h.position
                WHERE h.next_attempt_at <= clock_timestamp() AND (m.body IS NOT NULL OR d.body IS NOT NULL)
                ORDER BY h.position, h.sequence LIMIT \(Int64(limit))
                """)
            return try rows.map { row in
                let body: String = try row.decode(3)
                return (WebhookMessage(
                            position: try row.decode(0), sequence: try row.decode(1), hashPrefix: try row.decode(5), userKey: try row.decode(2),
                            body: Data(body.utf8)),
                        try row.decode(4))
            }
        }
    }

    /// How long until the next outstanding message is due (nil: none outstanding), and how many
    /// users have one.
    func outstandingOutlook() async throws -> (dueIn: Duration?, users: Int64) {
        let name = endpoint.name
        return try await pool.withConnection { connection in
            let row = try connection.query("""
                SELECT (extract(epoch FROM min(next_attempt_at) - clock_timestamp()) * 1000)::bigint, count(DISTINCT user_key)
                FROM webhook_outstanding WHERE endpoint = \(name)
                """)[0]
            let millis: Int64? = try row.decode(0)
            return (millis.map { .milliseconds(max(0, $0)) }, try row.decode(1))
        }
    }

    /// The endpoint's position, and up to `limit` messages after it in log order (with every
    /// message of the last ledger event read, so a position is handled whole), with the users
    /// among them that have outstanding messages (theirs wait behind those).
    func intake(limit: Int) async throws -> (position: Int64, messages: [WebhookMessage], blocked: Set<String>) {
        let name = endpoint.name
        return try await pool.withConnection { connection in
            let position: Int64 = try connection.query("SELECT position FROM webhook_endpoints WHERE name = \(name)")[0].decode(0)
            let rows = try connection.query("""
                WITH page AS (
                    SELECT position, sequence, user_id, body, hash_prefix FROM projection_webhook_events
                    WHERE position > \(position) ORDER BY position, sequence LIMIT \(Int64(limit))
                )
                SELECT position, sequence, coalesce(user_id, ''), body, hash_prefix FROM page
                UNION
                SELECT m.position, m.sequence, coalesce(m.user_id, ''), m.body, m.hash_prefix FROM projection_webhook_events m
                WHERE m.position = (SELECT max(position) FROM page)
                ORDER BY 1, 2
                """)
            let messages = try rows.map { row -> WebhookMessage in
                let body: String = try row.decode(3)
                return WebhookMessage(
                    position: try row.decode(0), sequence: try row.decode(1), hashPrefix: try row.decode(4), userKey: try row.decode(2),
                    body: Data(body.utf8))
            }
            let users = Array(Set(messages.map(\.userKey)))
            var blocked = Set<String>()
            if !users.isEmpty {
                for row in try connection.query("""
                    SELECT DISTINCT user_key FROM webhook_outstanding WHERE endpoint = \(name) AND user_key = ANY(\(PostgresArray(users.map { Optional($0) })))
                    """) { blocked.insert(try row.decode(0)) }
            }
            return (position, messages, blocked)
        }
    }

    /// What one pass did, recorded in one transaction while the lease is still this server's;
    /// throws `LeaseLost` (and records nothing) when it is not.
    func record(_ pass: WebhookPassResult) async throws {
        let (name, owner) = (endpoint.name, owner)
        try await pool.withTransaction { connection in
            let held = try connection.execute("""
                UPDATE webhook_endpoints SET
                    position = greatest(position, \(pass.newPosition ?? 0)),
                    delivered = delivered + \(Int64(pass.acknowledged.count)),
                    failed_attempts = failed_attempts + \(Int64(pass.failures.count)),
                    last_delivered_at = CASE WHEN \(!pass.acknowledged.isEmpty) THEN clock_timestamp() ELSE last_delivered_at END,
                    last_error = coalesce(\(pass.failures.last?.error), last_error),
                    last_error_at = CASE WHEN \(!pass.failures.isEmpty) THEN clock_timestamp() ELSE last_error_at END
                WHERE name = \(name) AND lease_owner = \(owner) AND lease_expires_at > clock_timestamp()
                """)
            guard held == 1 else { throw LeaseLost() }
            let acked = pass.acknowledged
            if !acked.isEmpty {
                _ = try connection.execute("""
                    DELETE FROM webhook_outstanding o USING unnest(\(PostgresArray(acked.map { Optional($0.position) }))::bigint[],
                                                              \(PostgresArray(acked.map { Optional(Int64($0.sequence)) }))::integer[]) AS a(position, sequence)
                    WHERE o.endpoint = \(name) AND o.position = a.position AND o.sequence = a.sequence
                    """)
            }
            // A failed attempt: counted, and due again after its back-off. A message queued
            // behind an earlier one of its user: due as soon as it is that user's earliest.
            let failures = pass.failures
            if !failures.isEmpty {
                let positions: [Int64?] = failures.map { $0.message.position }
                let sequences: [Int64?] = failures.map { Int64($0.message.sequence) }
                let users: [String?] = failures.map { $0.message.userKey }
                let attempts: [Int64?] = failures.map { Int64($0.attempts) }
                let delays: [Int64?] = failures.map { $0.delay.components.seconds * 1_000 + $0.delay.components.attoseconds / 1_000_000_000_000_000 }
                let errors: [String?] = failures.map { $0.error }
                _ = try connection.execute("""
                    INSERT INTO webhook_outstanding AS o (endpoint, position, sequence, user_key, attempts, next_attempt_at, last_error)
                    SELECT \(name), f.position, f.sequence, f.user_key, f.attempts, clock_timestamp() + make_interval(secs => f.delay_ms / 1000.0), f.error
                    FROM unnest(\(PostgresArray(positions))::bigint[], \(PostgresArray(sequences))::integer[], \(PostgresArray(users))::text[],
                                \(PostgresArray(attempts))::integer[], \(PostgresArray(delays))::bigint[], \(PostgresArray(errors))::text[])
                         AS f(position, sequence, user_key, attempts, delay_ms, error)
                    ON CONFLICT (endpoint, position, sequence) DO UPDATE SET
                        attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at, last_error = excluded.last_error
                    """)
            }
            let queued = pass.queued
            if !queued.isEmpty {
                _ = try connection.execute("""
                    INSERT INTO webhook_outstanding (endpoint, position, sequence, user_key)
                    SELECT \(name), q.position, q.sequence, q.user_key
                    FROM unnest(\(PostgresArray(queued.map { Optional($0.position) }))::bigint[],
                                \(PostgresArray(queued.map { Optional(Int64($0.sequence)) }))::integer[],
                                \(PostgresArray(queued.map { Optional($0.userKey) }))::text[]) AS q(position, sequence, user_key)
                    ON CONFLICT (endpoint, position, sequence) DO NOTHING
                    """)
            }
        }
    }

    struct LeaseLost: Error {}
}

/// What a pass over one endpoint did.
struct WebhookPassResult: Sendable {
    /// The endpoint's new position: the last message taken in (nil: none taken in).
    var newPosition: Int64?
    var acknowledged: [WebhookMessage] = []
    var failures: [(message: WebhookMessage, attempts: Int32, delay: Duration, error: String)] = []
    /// Taken in but not sent: waiting behind an earlier message of their user.
    var queued: [WebhookMessage] = []

    var isEmpty: Bool { newPosition == nil && acknowledged.isEmpty && failures.isEmpty && queued.isEmpty }
}

/// `webhooks redeliver`: a range of positions sent again to one endpoint, as outstanding
/// messages due now, the same ids and bytes. Returns how many were queued.
public enum WebhookRedelivery {
    public static func queue(endpoint: String, from: Int64, to: Int64?, on connection: Connection) throws -> Int {
        let known: Int64 = try connection.query("SELECT count(*) FROM webhook_endpoints WHERE name = \(endpoint)")[0].decode(0)
        guard known == 1 else { throw UnknownEndpoint(name: endpoint) }
        // Only messages at or before the endpoint's position: those after it are still to be
        // sent once anyway. One already waiting (refused, its retry an hour away) becomes due
        // now, its attempts kept: whoever asks for a redelivery knows the receiver is back.
        return try connection.execute("""
            INSERT INTO webhook_outstanding AS o (endpoint, position, sequence, user_key)
            SELECT \(endpoint), m.position, m.sequence, coalesce(m.user_id, '')
            FROM projection_webhook_events m, webhook_endpoints e
            WHERE e.name = \(endpoint) AND m.position >= \(from) AND m.position <= least(e.position, \(to ?? Int64.max))
            ON CONFLICT (endpoint, position, sequence) DO UPDATE SET next_attempt_at = least(o.next_attempt_at, clock_timestamp())
            """)
    }

    public struct UnknownEndpoint: Error, CustomStringConvertible {
        public let name: String
        public var description: String { "no webhook endpoint named \(name) has run on this database" }
    }
}
