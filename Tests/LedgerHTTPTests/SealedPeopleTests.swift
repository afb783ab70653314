import Foundation
import LedgerStore
import LedgerWebhooks
import Postgres
import Testing

/// A person's id as the API takes it (docs/erasure.md): recorded sealed under their own key, so
/// no table of the ledger's holds it readable, events and documents included, while every way
/// out (answers, timelines, the feed, webhooks, the console) shows it.
@Suite struct SealedPeopleTests {
    /// Every row of every table in the ledger's schema, as text, holding `text`.
    static func tablesHolding(_ text: String, on pool: ConnectionPool) async throws -> [String] {
        try await pool.withConnection { connection in
            let tables: [String] = try connection.query("""
                SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
                """).map { try $0.decode(0) }
            return try tables.filter { table in
                try connection.query("SELECT EXISTS (SELECT 1 FROM \(identifier: table) t WHERE strpos(t::text, \(text)) > 0)").first?.decode(0, as: Bool.self) ?? false
            }
        }
    }

    /// A spend's reason, as an app may word it: about the person.
    static let privateWords = "Alice's birthday, flat 4B"

    @Test("an id the API is given is stored nowhere readable, and every answer, timeline and feed message shows it")
    func sealedEverywhereShownEverywhere() async throws {
        let receiver = WebhookReceiver(signer: try WebhookFlowTests.signer())
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)]) { ledger in
            // An e-mail as the id, and a 200-character one of multi-byte letters: its handle is
            // longer than a stream id may be, and its streams are named by its subject.
            let alice = "alice.sealed@example.com"
            let long = String(repeating: "ü", count: 200)
            for (index, user) in [alice, long].enumerated() {
                let (_, coins) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-sealed-\(index)")
                let answer = try await ledger.submit(user: user, purchase: coins)
                #expect(answer.outcome == "delivered")
                #expect(answer.deliveries.first?["user_id"] as? String == user)
                let path = "/v1/users/\(user.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
                let spent = try await ledger.post(
                    path + "/spend", ["unit": "coins", "amount": 30, "spend_id": "sealed-\(index)", "reason": "gift for \(Self.privateWords)"])
                #expect(spent.status == 200, "\(spent.json)")
                // The same spend again is the same spend: its sealed reason compares equal.
                let again = try await ledger.post(
                    path + "/spend", ["unit": "coins", "amount": 30, "spend_id": "sealed-\(index)", "reason": "gift for \(Self.privateWords)"])
                #expect(again.status == 200 && again.json["balance"] as? Int == spent.json["balance"] as? Int, "\(again.json)")
                #expect(try await ledger.post(path + "/consent", ["consumption_data": true]).status == 200)
                let view = try await ledger.get(path)
                #expect(view.json["user_id"] as? String == user)
                #expect((view.json["balances"] as? [String: Any])?["coins"] as? Int == 70)
            }

            // Nothing readable of either id in any table: events (payloads, streams, keys),
            // documents, projections, webhook bodies, subjects.
            try await ledger.eventually("the projections have caught up") {
                try await ledger.get("/v1/timelines/users/\(alice)", token: LedgerHarness.supportToken).status == 200
            }
            #expect(try await Self.tablesHolding(alice, on: ledger.pool) == [])
            #expect(try await Self.tablesHolding(long, on: ledger.pool) == [])
            #expect(try await Self.tablesHolding("alice.sealed", on: ledger.pool) == [])
            #expect(try await Self.tablesHolding(Self.privateWords, on: ledger.pool) == [])

            // The timelines know a sealed person by their subject alone (TimelineProjection.Subject).
            let people = try await ledger.pool.withConnection { connection in
                try connection.query("SELECT DISTINCT subject FROM projection_timeline_links WHERE subject LIKE 'person:%' OR subject LIKE 'user:%'")
                    .map { try $0.decode(0, as: String.self) }
            }
            #expect(people.count == 2 && people.allSatisfy { $0.hasPrefix("person:s") && $0.count == "person:".count + 27 }, "\(people)")

            // Shown where a person is read: the timeline's summaries and data, the feed, webhooks.
            let timeline = try await ledger.get("/v1/timelines/users/\(alice)", token: LedgerHarness.supportToken)
            #expect(timeline.json["subject"] as? String == alice)
            let entries = timeline.json["entries"] as? [[String: Any]] ?? []
            #expect(entries.contains { ($0["summary"] as? String)?.contains(alice) == true })
            #expect(entries.contains { ($0["summary"] as? String)?.contains(Self.privateWords) == true })
            let feed = try await WebhookFlowTests.feed(ledger)
            let named = Set(feed.compactMap { ($0["data"] as? [String: Any])?["user_id"] as? String })
            #expect(named == [alice, long])
            try await ledger.eventually("the webhooks are told", within: .seconds(30)) { receiver.acknowledged.count >= feed.count }
            #expect(Set(receiver.acknowledged.compactMap { $0.data["user_id"] as? String }) == [alice, long])
            #expect(receiver.acknowledged.allSatisfy { $0.signatureValid })
        }
    }
}
