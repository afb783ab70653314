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
            let hold = try await ProjectionHold.start(on: ledger)
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            let delivered = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(delivered.status == 200)
            #expect(delivered.outcome == "delivered")

            let behind = try await ledger.get("/v1/users/u1")
            #expect(behind.status == 503)
            #expect(behind.errorCode == "projections_behind")
            #expect(behind.header("Retry-After") == "1")
            #expect(behind.json["balances"] == nil)

            try await hold.release()
            let caughtUp = try await ledger.get("/v1/users/u1")
            #expect(caughtUp.status == 200)
            #expect((caughtUp.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
        }
    }
}
