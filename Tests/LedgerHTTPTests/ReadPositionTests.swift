import Foundation
import Postgres
import Testing

/// Reads that say what they need (docs/http-api.md): every recording 2xx names its position in
/// `X-Ledger-Position`; a read with `X-Ledger-After` waits for that position and nothing after
/// it, `0` waits for nothing, and the default still waits for the head.
@Suite("Reads wait for the position they are given")
struct ReadPositionTests {
    static func position(_ answer: LedgerHarness.Answer) throws -> Int64 {
        try #require(answer.header("X-Ledger-Position").flatMap { Int64($0) }, "X-Ledger-Position on \(answer.status)")
    }

    static func head(_ ledger: LedgerHarness) async throws -> Int64 {
        try await ledger.pool.withConnection { try $0.query("SELECT max(position) FROM events")[0].decode(0) }
    }

    @Test("every recording 2xx names the last event it recorded, or the head when an earlier event answered it; reads name none")
    func recordingAnswersCarryTheirPosition() async throws {
        try await LedgerHarness.with { ledger in
            let order = try await ledger.post("/v1/orders", ["user_id": "p1", "product_id": "com.example.coins100"])
            #expect(order.status == 201)
            #expect(try Self.position(order) == (try await Self.head(ledger)))

            let purchase = try await ledger.simulator.purchase(
                appleId: "apple-p1", productId: "com.example.coins100", environment: .production,
                appAccountToken: UUID(uuidString: try #require(order.json["app_account_token"] as? String)))
            let delivered = try await ledger.submit(user: "p1", purchase: purchase)
            #expect(delivered.outcome == "delivered")
            let recorded = try Self.position(delivered)
            #expect(recorded > (try Self.position(order)))
            #expect(recorded == (try await Self.head(ledger)), "the receipt's last event is the head: nothing else wrote")

            // Another caller writes; the same receipt again is answered from what was recorded
            // (plus its own submission event), and names a position that holds the answer.
            let (_, other) = try await ledger.orderAndBuy(user: "p2", product: "com.example.coins100", appleId: "apple-p2")
            #expect(try await ledger.submit(user: "p2", purchase: other).status == 200)
            let again = try await ledger.submit(user: "p1", purchase: purchase)
            #expect(again.status == 200)
            #expect(try Self.position(again) >= recorded)
            #expect(try Self.position(again) <= (try await Self.head(ledger)))

            let read = try await ledger.get("/v1/users/p1")
            #expect(read.status == 200)
            #expect(read.header("X-Ledger-Position") == nil)
            // A refused request records nothing and names nothing.
            let refused = try await ledger.post("/v1/orders", ["user_id": "p1", "product_id": "com.example.unknown"])
            #expect(refused.status >= 400)
            #expect(refused.header("X-Ledger-Position") == nil)
        }
    }

    @Test("with the runner held back, a read after one's own earlier receipt answers at once where a read of the head cannot; a read after a later one waits for it")
    func aReadWaitsForItsPositionOnly() async throws {
        try await LedgerHarness.with(readYourWritesTimeout: .milliseconds(500)) { ledger in
            let (_, mine) = try await ledger.orderAndBuy(user: "mine", product: "com.example.coins100", appleId: "apple-mine")
            let position = try Self.position(try await ledger.submit(user: "mine", purchase: mine))
            #expect(try await ledger.get("/v1/users/mine").status == 200, "applied before the runner is held")

            let hold = try await ProjectionHold.start(on: ledger)
            let (_, theirs) = try await ledger.orderAndBuy(user: "theirs", product: "com.example.coins100", appleId: "apple-theirs")
            let later = try Self.position(try await ledger.submit(user: "theirs", purchase: theirs))
            #expect(later > position)

            // The head includes their receipt, which the runner cannot apply: the default read fails.
            let byHead = try await ledger.get("/v1/users/mine")
            #expect(byHead.status == 503)
            #expect(byHead.errorCode == "projections_behind")
            // Mine is applied: a read after it answers, without waiting for theirs (which cannot
            // be applied until the hold is released below: waiting for it would end in 503).
            let byPosition = try await ledger.request(.GET, "/v1/users/mine", headers: [("X-Ledger-After", String(position))])
            #expect(byPosition.status == 200)
            #expect((byPosition.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
            // 0 waits for nothing and shows what the read models hold: their coins are not there yet.
            let stale = try await ledger.request(.GET, "/v1/users/theirs", headers: [("X-Ledger-After", "0")])
            #expect(stale.status == 200)
            #expect((stale.json["balances"] as? [String: any Sendable])?["coins"] == nil)

            // A read after their receipt waits for it: it answers once the runner is let go.
            async let waiting = ledger.request(.GET, "/v1/users/theirs", headers: [("X-Ledger-After", String(later))])
            try await ledger.eventually("the read waits for the runner") { ledger.server.runner.waitingReads == 1 }
            try await hold.release()
            let afterLater = try await waiting
            #expect(afterLater.status == 200)
            #expect((afterLater.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
        }
    }

    @Test("X-Ledger-After that is not a position, or is past the log's head, is a 400 at once")
    func badPositions() async throws {
        try await LedgerHarness.with { ledger in
            for bad in ["abc", "-1", "1.5", "99999999999999999999"] {
                let answer = try await ledger.request(.GET, "/v1/users/nobody", headers: [("X-Ledger-After", bad)])
                #expect(answer.status == 400, "X-Ledger-After: \(bad)")
                #expect(answer.errorCode == "invalid_request")
            }
            // Positions are named only once committed: one past the head was never this log's.
            let beyond = try await ledger.request(
                .GET, "/v1/users/nobody", headers: [("X-Ledger-After", String(try await Self.head(ledger) + 1_000))])
            #expect(beyond.status == 400)
            #expect(beyond.errorCode == "invalid_request")
            // The head itself is fine: the read is made, and finds no one (404, docs/erasure.md).
            let atHead = try await ledger.request(.GET, "/v1/users/nobody", headers: [("X-Ledger-After", String(try await Self.head(ledger)))])
            #expect(atHead.status == 404 && atHead.errorCode == "not_found")
        }
    }
}
