import EventStore
import Foundation
import LedgerStore
import LedgerWebhooks
import Postgres
import TestSupport
import Testing

/// `webhooks redeliver`'s queue (`WebhookRedelivery.queue`) against PostgreSQL: what a range
/// queues, and what becomes of a message of the range already waiting for its retry.
@Suite("Redelivery of a range of positions")
struct WebhookRedeliveryTests {
    @Test("the range up to the endpoint's position is queued; a message already waiting hours for its retry becomes due now, its attempts kept")
    func queue() async throws {
        try await TestDatabase.withSchema { _, pool in
            _ = try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            let (attempts, dueAfter, fresh, queued) = try await pool.withConnection { connection -> (Int32, Bool, Int32?, Int) in
                _ = try connection.execute("INSERT INTO webhook_endpoints (name, url, position) VALUES ('backend', 'http://127.0.0.1:9/webhooks', 10)")
                for position: Int64 in [5, 6, 12] {
                    _ = try connection.execute("""
                        INSERT INTO projection_webhook_events (position, sequence, user_id, type, body)
                        VALUES (\(position), 0, 'u-1', 'balance.changed', '{}')
                        """)
                }
                // Position 5 was refused seven times: its next attempt is an hour away.
                _ = try connection.execute("""
                    INSERT INTO webhook_outstanding (endpoint, position, sequence, user_key, attempts, next_attempt_at, last_error)
                    VALUES ('backend', 5, 0, 'u-1', 7, clock_timestamp() + interval '1 hour', 'HTTP 500')
                    """)
                let queued = try WebhookRedelivery.queue(endpoint: "backend", from: 1, to: nil, on: connection)
                let waiting = try connection.query("""
                    SELECT attempts, next_attempt_at <= clock_timestamp() FROM webhook_outstanding WHERE endpoint = 'backend' AND position = 5
                    """)[0]
                let fresh: Int32? = try connection.query(
                    "SELECT attempts FROM webhook_outstanding WHERE endpoint = 'backend' AND position = 6").first?.decode(0)
                let beyond: Int64 = try connection.query(
                    "SELECT count(*) FROM webhook_outstanding WHERE endpoint = 'backend' AND position = 12")[0].decode(0)
                #expect(beyond == 0, "a message after the endpoint's position is still to be sent once, not queued")
                return (try waiting.decode(0), try waiting.decode(1), fresh, queued)
            }
            #expect(queued == 2)
            #expect(attempts == 7 && dueAfter, "the waiting message is due now, its attempts kept")
            #expect(fresh == 0)
            await #expect(throws: WebhookRedelivery.UnknownEndpoint.self) {
                try await pool.withConnection { try WebhookRedelivery.queue(endpoint: "nobody", from: 1, to: nil, on: $0) }
            }
        }
    }
}
