import Foundation
import Postgres
import Testing

/// A read waits until the projections have applied the log's head; when they cannot within the
/// configured time it must say so (503 `projections_behind`, `Retry-After`), never answer from
/// read models that do not yet show what the caller was just told was delivered.
@Suite("Reads wait for the projections, and say so when they cannot")
struct ReadYourWritesTests {
    @Test("a read whose projections are held back answers 503 projections_behind with Retry-After, then the credit once they catch up")
    func projectionsBehind() async throws {
        try await LedgerHarness.with(readYourWritesTimeout: .milliseconds(500)) { ledger in
            // A transaction holding the balances table against writes stops the runner before it
            // can apply the delivery; reads of the table still go through. It holds the lock
            // until the test writes a release row (each statement of the loop sees the commits
            // of others), or fails after 60 s.
            try await ledger.pool.withConnection { _ = try $0.execute("CREATE TABLE test_release (released boolean)") }
            let holder = Task {
                try await ledger.pool.withTransaction { connection in
                    _ = try connection.execute("LOCK TABLE projection_balances IN EXCLUSIVE MODE")
                    try connection.executeScript(unsafeSQL: """
                        DO $$
                        DECLARE deadline timestamptz := clock_timestamp() + interval '60 seconds';
                        BEGIN
                            WHILE NOT EXISTS (SELECT 1 FROM test_release) LOOP
                                IF clock_timestamp() > deadline THEN RAISE EXCEPTION 'never released'; END IF;
                                PERFORM pg_sleep(0.01);
                            END LOOP;
                        END $$
                        """)
                }
            }
            try await ledger.eventually("the balances table is locked") {
                try await ledger.pool.withConnection { connection in
                    try connection.query("""
                        SELECT count(*) FROM pg_locks
                        WHERE relation = 'projection_balances'::regclass AND mode = 'ExclusiveLock' AND granted
                        """)[0].decode(0, as: Int64.self) == 1
                }
            }
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let delivered = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(delivered.status == 200)
            #expect(delivered.outcome == "delivered")

            let behind = try await ledger.get("/v1/users/u1")
            #expect(behind.status == 503)
            #expect(behind.errorCode == "projections_behind")
            #expect(behind.header("Retry-After") == "1")
            #expect(behind.json["balances"] == nil)

            try await ledger.pool.withConnection { _ = try $0.execute("INSERT INTO test_release VALUES (true)") }
            try await holder.value
            let caughtUp = try await ledger.get("/v1/users/u1")
            #expect(caughtUp.status == 200)
            #expect((caughtUp.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
        }
    }
}
