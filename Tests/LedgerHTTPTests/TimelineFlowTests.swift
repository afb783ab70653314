import AppleSimulator
import Foundation
import Ledger
import LedgerQueries
import Postgres
import Testing

/// Dispute timelines through the API, after a purchase, a resubmission and a refund.
@Suite("Dispute timelines")
struct TimelineFlowTests {
    func types(_ answer: LedgerHarness.Answer) -> [String] {
        ((answer.json["entries"] as? [[String: any Sendable]]) ?? []).compactMap { $0["type"] as? String }
    }

    @Test("a transaction's timeline holds its order, submissions, Apple's evidence, delivery and refund in order, and the chain vouches for them")
    func transactionTimeline() async throws {
        try await LedgerHarness.with { ledger in
            let (order, coins) = try await ledger.orderAndBuy(user: "alice", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: coins).outcome == "delivered")
            #expect(try await ledger.submit(user: "alice", purchase: coins).outcome == "already_delivered")
            // Someone else's purchase stays out of alice's transaction's story.
            let (_, other) = try await ledger.orderAndBuy(user: "bob", product: "com.example.coins100", appleId: "apple-2")
            #expect(try await ledger.submit(user: "bob", purchase: other).outcome == "delivered")
            _ = try await ledger.simulator.refund(transactionId: coins.transactionId, reason: 1)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }

            let timeline = try await ledger.get("/v1/timelines/transactions/\(coins.transactionId)", token: LedgerHarness.financeToken)
            #expect(timeline.status == 200, "\(timeline.json)")
            // The route writes its body without JSONEncoder: the encoder's bytes all the same,
            // for each kind of timeline (Apple's evidence, a refund, unicode summaries).
            for (kind, id) in [(TimelineView.Kind.transaction, coins.transactionId), (.user, try await ledger.recorded("alice")), (.order, order["order_id"] as? String ?? "")] {
                let view = try #require(try await ledger.server.reads.timeline(kind, id))
                #expect(view.jsonBytes == Array(try LedgerJSON.encoder.encode(view)), "\(kind)")
            }
            #expect(timeline.json["subject"] as? String == coins.transactionId)
            let seen = types(timeline)
            for expected in ["OrderCreated", "ReceiptSubmitted", "AppleResponded", "PurchaseDelivered", "OrderFulfilled", "SubmissionResolved", "PurchaseRefunded"] {
                #expect(seen.contains(expected), "\(expected) missing from \(seen)")
            }
            #expect(seen.filter { $0 == "ReceiptSubmitted" }.count == 2, "the resubmission is part of the story")
            #expect(seen.firstIndex(of: "OrderCreated")! < seen.firstIndex(of: "PurchaseDelivered")!)
            #expect(seen.lastIndex(of: "PurchaseRefunded")! > seen.lastIndex(of: "PurchaseDelivered")!)
            let entries = try #require(timeline.json["entries"] as? [[String: any Sendable]])
            let positions = entries.compactMap { $0["position"] as? Int }
            #expect(positions == positions.sorted() && Set(positions).count == positions.count)
            let text = entries.map { ($0["summary"] as? String) ?? "" }.joined(separator: "\n")
            #expect(!text.contains(other.transactionId), "bob's purchase is not in alice's transaction's timeline")
            #expect(text.contains("Refunded by Apple"))
            // Apple's own words: the receipt entry of this transaction, with its purchase date.
            let apple = try #require(entries.first { $0["type"] as? String == "AppleResponded" }?["data"] as? [String: any Sendable])
            let evidence = try #require(apple["apple_evidence"] as? [String: any Sendable])
            #expect(evidence["status"] as? Int == 0)
            let listed = try #require(evidence["entries"] as? [[String: any Sendable]])
            #expect(listed.contains { $0["transaction_id"] as? String == coins.transactionId && $0["purchase_date"] is String })
            let chain = try #require(timeline.json["chain"] as? [String: any Sendable])
            let checkpoint: String = try await ledger.pool.withConnection {
                try $0.query("SELECT position::text || ' ' || coalesce(broken, 'sound') FROM chain_checkpoint")[0].decode(0)
            }
            #expect(chain["verified"] as? Bool == true, "checkpoint \(checkpoint), entries up to \(positions.last ?? 0)")
            #expect((chain["head_hash"] as? String)?.wholeMatch(of: /[0-9a-f]{64}/) != nil)

            let orderTimeline = try await ledger.get("/v1/timelines/orders/\(order["order_id"] as? String ?? "")", token: LedgerHarness.financeToken)
            #expect(types(orderTimeline).contains("OrderFulfilled") && types(orderTimeline).contains("PurchaseRefunded"))
            let user = try await ledger.get("/v1/timelines/users/alice", token: LedgerHarness.financeToken)
            #expect(types(user).first == "OrderCreated")
            #expect(types(user).contains("PurchaseRefunded"))

            let unknown = try await ledger.get("/v1/timelines/users/nobody", token: LedgerHarness.financeToken)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "not_found")
            let appToken = try await ledger.get("/v1/timelines/users/alice")
            #expect(appToken.status == 403)
        }
    }

    @Test("an event changed behind the ledger's back makes its timelines say not verified")
    func tamperedTimeline() async throws {
        try await LedgerHarness.with { ledger in
            let (_, coins) = try await ledger.orderAndBuy(user: "alice", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "alice", purchase: coins).outcome == "delivered")
            let before = try await ledger.get("/v1/timelines/users/alice", token: LedgerHarness.financeToken)
            #expect((before.json["chain"] as? [String: any Sendable])?["verified"] as? Bool == true)
            try await ledger.pool.withConnection { connection in
                try connection.executeScript(unsafeSQL: """
                    ALTER TABLE events DISABLE TRIGGER events_90_immutable;
                    UPDATE events SET payload = jsonb_set(payload, '{quantity}', '5') WHERE event_type = 'PurchaseDelivered';
                    ALTER TABLE events ENABLE TRIGGER events_90_immutable;
                    """)
            }
            let after = try await ledger.get("/v1/timelines/users/alice", token: LedgerHarness.financeToken)
            #expect((after.json["chain"] as? [String: any Sendable])?["verified"] as? Bool == false)
        }
    }
}
