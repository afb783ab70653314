import EventStore
import Foundation
import LedgerStore
import Postgres
import TestSupport
import Testing

/// The primary dies in the middle of purchases from 8 clients: the secondary is promoted, the
/// ledger follows it by itself, every purchase that got a 2xx is in the new primary's log once,
/// every purchase ends delivered once after clients retry, and the chain verifies. Then the old
/// primary rejoins as a standby, and a failover back works the same way.
/// (The suite is declared in `HASet`, which keeps it apart from the other suite on the set.)
extension HASet.FailoverTests {
    @Test func purchasesSurviveAFailoverAndAFailoverBack() async throws {
        try await HACluster.withSchema { conninfo, _ in
            try await LedgerHarness.with(database: conninfo) { ledger in
                let firstPrimary = try await HACluster.run("primary").trimmingCharacters(in: .whitespacesAndNewlines)
                try await Self.round(ledger: ledger, conninfo: conninfo, prefix: "a", purchases: 500, killAfter: 150)
                let secondPrimary = try await HACluster.run("primary").trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(secondPrimary != firstPrimary, "the secondary was promoted")

                // The old primary comes back as a standby, then the roles swap again.
                var started = ContinuousClock.now
                try await HACluster.run("rejoin")
                print("rejoined as standby in \(ContinuousClock.now - started)")
                try await Self.round(ledger: ledger, conninfo: conninfo, prefix: "b", purchases: 200, killAfter: 60)
                let thirdPrimary = try await HACluster.run("primary").trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(thirdPrimary == firstPrimary, "the failover back promoted the first node again")
                started = ContinuousClock.now
                try await HACluster.run("rejoin")
                print("rejoined as standby in \(ContinuousClock.now - started)")
            }
        }
    }

    /// `purchases` from 8 clients; the primary is killed once `killAfter` are delivered.
    static func round(ledger: LedgerHarness, conninfo: String, prefix: String, purchases: Int, killAfter: Int) async throws {
        let began = ContinuousClock.now
        let storm = PurchaseStorm(count: purchases, prefix: prefix)
        async let clients: Void = storm.run(ledger: ledger, clients: 8, deadline: .seconds(240))
        let deadline = ContinuousClock.now + .seconds(120)
        while storm.delivered < killAfter, storm.failures.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // The clock starts once the node is dead: a call begun after this can only be answered
        // by the new primary.
        try await HACluster.run("kill-primary")
        storm.markKilled()
        await clients
        #expect(storm.failures.isEmpty, "\(storm.failures.prefix(5))")
        #expect(storm.delivered == purchases)
        let recovery = try #require(storm.killToFirstSuccess)
        #expect(recovery < .seconds(60), "the first 2xx after the kill took \(recovery)")
        print("failover round \(prefix): \(purchases) purchases in \(ContinuousClock.now - began), \(storm.retried) retried calls (\(storm.reasons.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))), first 2xx \(recovery) after the kill")

        // The new primary's log: each purchase delivered exactly once, its order created once.
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
        defer { Task { await pool.close() } }
        // The log records each storm user under their handle (docs/erasure.md).
        let people = People(subjects: SubjectStore(pool: pool, keyEncryptionKey: nil))
        var handles: [String?] = []
        for index in 0..<purchases { handles.append(try await people.knownHandle(forUser: "\(prefix)-u\(index)")) }
        let users = PostgresArray(handles)
        let (deliveries, distinct, orders): (Int64, Int64, Int64) = try await pool.withConnection { connection in
            let row = try connection.query("""
                SELECT count(*), count(DISTINCT payload->>'transaction_id') FROM events
                WHERE event_type = 'PurchaseDelivered' AND payload->>'user_id' = ANY(\(users)::text[])
                """)[0]
            let orders: Int64 = try connection.query("""
                SELECT count(*) FROM events WHERE event_type = 'OrderCreated' AND payload->>'user_id' = ANY(\(users)::text[])
                """)[0].decode(0)
            return (try row.decode(0), try row.decode(1), orders)
        }
        #expect(deliveries == Int64(purchases), "deliveries recorded")
        #expect(distinct == Int64(purchases), "each transaction delivered once")
        #expect(orders == Int64(purchases), "each order created once, retries answered by its Idempotency-Key")
        let delivered = Set(try await pool.withConnection { connection in
            try connection.query("""
                SELECT payload->>'transaction_id' FROM events WHERE event_type = 'PurchaseDelivered' AND payload->>'user_id' = ANY(\(users)::text[])
                """).map { try $0.decode(0) as String }
        })
        #expect(Set(storm.purchases.map(\.transactionId)) == delivered, "every 2xx is in the new primary's log")
        let outcome = try await ChainVerifier(pool: pool).verify()
        guard case .verified = outcome else {
            Issue.record("the chain does not verify on the new primary: \(outcome)")
            return
        }
    }
}
