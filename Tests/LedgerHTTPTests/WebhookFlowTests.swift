import Foundation
import Ledger
import LedgerWebhooks
import Postgres
import Spawning
import Synchronization
import Testing

/// Webhooks end to end in one process: a real server delivering over HTTP to receivers on
/// loopback, the simulator standing in for Apple (purchases, refunds, reversals, renewals).
@Suite("Webhooks and the event feed")
struct WebhookFlowTests {
    static func signer() throws -> WebhookSigner {
        WebhookSigner(secrets: try WebhookSecrets(LedgerHarness.webhookSecret))
    }

    /// The feed from the first position to the end, following `next`.
    static func feed(_ ledger: LedgerHarness, limit: Int = 7) async throws -> [[String: Any]] {
        var after = 0
        var hash: String?
        var all: [[String: Any]] = []
        while true {
            // Each page after the first resumes as a consumer does: after the last position it
            // holds, with that event's hash, which the log still has.
            let page = try await ledger.get("/v1/events?after=\(after)&limit=\(limit)" + (hash.map { "&after_hash=\($0)" } ?? ""))
            #expect(page.status == 200)
            let events = page.json["events"] as? [[String: Any]] ?? []
            let next = page.json["next"] as? Int ?? -1
            if events.isEmpty {
                #expect(next == after, "an empty page's next is its after")
                return all
            }
            // A page never splits one ledger event's messages.
            let last = (events.last?["data"] as? [String: Any])?["position"] as? Int
            #expect(next == last)
            all += events
            after = next
            hash = (events.last?["data"] as? [String: Any])?["hash"] as? String
            #expect(hash?.wholeMatch(of: /[0-9a-f]{64}/) != nil)
        }
    }

    @Test("every change reaches the endpoint signed, each user's in log order, and the feed and a redelivery serve the same messages")
    func told() async throws {
        let receiver = WebhookReceiver(signer: try Self.signer())
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)]) { ledger in
            // Coins bought, spent, refunded and the refund reversed; a subscription bought and renewed.
            let (_, coins) = try await ledger.orderAndBuy(user: "w-alice", product: "com.example.coins100", appleId: "apple-w1")
            #expect(try await ledger.submit(user: "w-alice", purchase: coins).outcome == "delivered")
            let spend = try await ledger.post("/v1/users/w-alice/spend", ["unit": "coins", "amount": 30, "spend_id": "w-s1"])
            #expect(spend.status == 200)
            let (_, monthly) = try await ledger.orderAndBuy(user: "w-bob", product: "com.example.pro.monthly", appleId: "apple-w2")
            #expect(try await ledger.submit(user: "w-bob", purchase: monthly).outcome == "delivered")
            _ = try await ledger.simulator.refund(transactionId: coins.transactionId, reason: 0)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            _ = try await ledger.simulator.reverseRefund(transactionId: coins.transactionId)
            try await ledger.eventually("the reversal is recorded") { try await ledger.count("RefundReversed") == 1 }
            _ = try await ledger.simulator.advance(days: 32)
            try await ledger.eventually("the renewal is recorded") { try await ledger.count("SubscriptionRenewalSeen") >= 1 }

            let expected: [(String, String)] = [
                ("w-alice", "purchase.delivered"), ("w-alice", "balance.changed"), ("w-alice", "balance.changed"),
                ("w-bob", "purchase.delivered"), ("w-alice", "purchase.refunded"), ("w-alice", "balance.changed"),
                ("w-alice", "refund.reversed"), ("w-alice", "balance.changed"), ("w-bob", "subscription.renewed"),
            ]
            try await ledger.eventually("every message is acknowledged", within: .seconds(30)) {
                receiver.acknowledged.count >= expected.count
            }
            let told = receiver.acknowledged
            #expect(told.allSatisfy { $0.signatureValid })
            for user in ["w-alice", "w-bob"] {
                let theirs = told.filter { $0.data["user_id"] as? String == user }
                #expect(theirs.map(\.type) == expected.filter { $0.0 == user }.map(\.1), "\(user)'s messages in log order")
                let positions = theirs.map { Self.order($0.id) }
                #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 })
            }
            // Running balance: +100, -30, -100 (refund), +100 (reversal).
            let balances = told.filter { $0.type == "balance.changed" }.map { ($0.data["change"] as? Int, $0.data["balance"] as? Int) }
            #expect(balances.map(\.0) == [100, -30, -100, 100])
            #expect(balances.map(\.1) == [100, 70, -30, 70])
            let refund = try #require(told.first { $0.type == "purchase.refunded" })
            #expect(refund.data["refunded_fraction_milli"] as? Int == 100_000)
            #expect(refund.data["transaction_id"] as? String == coins.transactionId)
            let delivered = try #require(told.first { $0.type == "purchase.delivered" })
            #expect(delivered.data["quantity"] as? Int == 1)
            #expect(delivered.data["environment"] as? String == "Production")
            #expect(delivered.data["order_id"] is String)
            let renewed = try #require(told.first { $0.type == "subscription.renewed" })
            #expect((renewed.data["expires_at"] as? String)?.hasSuffix("Z") == true)

            // The feed: the same objects with their ids, in log order, however the pages fall.
            let feed = try await Self.feed(ledger)
            #expect(feed.map { $0["id"] as? String ?? "" } == told.sorted { Self.order($0.id) < Self.order($1.id) }.map(\.id))
            for arrival in told {
                let object = try #require(feed.first { $0["id"] as? String == arrival.id })
                var body = object
                body["id"] = nil
                #expect(NSDictionary(dictionary: body).isEqual(to: arrival.json), "\(arrival.id) served as sent")
                // The id names the event's position, its hash's first 16 hex digits, the sequence.
                let data = try #require(arrival.data["hash"] as? String)
                #expect(arrival.id.hasPrefix("evt_\(arrival.data["position"] as? Int ?? -1)_\(data.prefix(16))_"))
            }

            // A resume point the log does not hold: 409 history_diverged with the head to resume
            // after. Another hash at a position the log has, and a position past its end.
            let newest = try #require(feed.last)
            let lastPosition = try #require((newest["data"] as? [String: Any])?["position"] as? Int)
            let lastHash = try #require((newest["data"] as? [String: Any])?["hash"] as? String)
            let head = try #require(try await ledger.pool.withConnection { connection in
                try connection.query("SELECT position, encode(hash, 'hex') FROM events ORDER BY position DESC LIMIT 1").first
                    .map { (try $0.decode(0, as: Int64.self), try $0.decode(1, as: String.self)) }
            })
            let resumed = try await ledger.get("/v1/events?after=\(lastPosition)&after_hash=\(lastHash.prefix(16))")
            #expect(resumed.status == 200, "the id's 16 digits are enough to resume")
            let otherHash = String(lastHash.map { $0 == "0" ? "1" : "0" })
            for query in ["after=\(lastPosition)&after_hash=\(otherHash)", "after=\(head.0 + 5)&after_hash=\(lastHash)"] {
                let diverged = try await ledger.get("/v1/events?\(query)")
                #expect(diverged.status == 409, "\(query)")
                #expect((diverged.json["error"] as? [String: Any])?["code"] as? String == "history_diverged")
                let told = try #require(diverged.json["head"] as? [String: Any])
                // The head as the read saw it: the one read above, unless a worker appended since.
                let position = try #require(told["position"] as? Int)
                #expect(position >= Int(head.0))
                if position == Int(head.0) { #expect(told["hash"] as? String == head.1) }
            }
            for bad in ["zz", "abc", String(repeating: "a", count: 65)] {
                let refused = try await ledger.get("/v1/events?after=1&after_hash=\(bad)")
                #expect(refused.status == 400, "after_hash=\(bad)")
                #expect((refused.json["error"] as? [String: Any])?["code"] as? String == "invalid_request")
            }

            // Redelivery of a range of positions, by the command an operator runs: the same ids
            // and bytes again, and only that range's.
            let positions = told.compactMap { $0.data["position"] as? Int }
            let (first, last) = (try #require(positions.min()), try #require(positions.sorted().dropFirst(2).first))
            let inRange = Set(told.filter { ($0.data["position"] as? Int).map { (first...last).contains($0) } ?? false }.map(\.id))
            #expect(inRange.count >= 3)
            let before = receiver.arrivals.count
            let redeliver = try await LedgerProcess.run(
                ["webhooks", "redeliver", "backend", "--from", "\(first)", "--to", "\(last)"], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(redeliver.exit == ProcessExit(status: 0, signaled: false), "\(redeliver.output)")
            #expect(redeliver.output.contains("\(inRange.count) messages queued for redelivery to backend"), "\(redeliver.output)")
            try await ledger.eventually("the range is sent again") { receiver.arrivals.count >= before + inRange.count }
            let again = receiver.arrivals[before...]
            for arrival in again {
                let original = try #require(told.first { $0.id == arrival.id })
                #expect(arrival.body == original.body)
                #expect(arrival.signatureValid)
            }
            #expect(Set(again.map(\.id)) == inRange)
            let unknown = try await LedgerProcess.run(
                ["webhooks", "redeliver", "nobody", "--from", "1"], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(unknown.exit != ProcessExit(status: 0, signaled: false), "\(unknown.output)")

            // Status: nothing waiting once the pass that sent the range is recorded.
            try await ledger.eventually("the redelivery is recorded") {
                try await ledger.pool.withConnection { try WebhookStatus.endpoints(on: $0) }.first?.backlog == 0
            }
            let status = try await ledger.pool.withConnection { try WebhookStatus.endpoints(on: $0) }
            #expect(status.map(\.name) == ["backend"])
            #expect(status.first?.lastError == nil)
            #expect(status.first?.delivered == Int64(told.count + inRange.count))
            let printed = try await LedgerProcess.run(["webhooks", "status"], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(printed.exit == ProcessExit(status: 0, signaled: false), "\(printed.output)")
            #expect(printed.output.contains("backend \(receiver.url.absoluteString) backlog 0"), "\(printed.output)")
            #expect(printed.output.contains("last error: none"))
        }
    }

    /// The (position, sequence) of an id `evt_POSITION_HASH16_SEQUENCE`.
    static func order(_ id: String) -> (Int, Int) {
        let parts = id.split(separator: "_")
        return (Int(parts[1]) ?? 0, Int(parts[3]) ?? 0)
    }

    @Test("a refusing endpoint is retried until it answers, and its backlog and last error show meanwhile")
    func retried() async throws {
        let failing = FailSwitch()
        let receiver = WebhookReceiver(signer: try Self.signer()) { _ in failing.on ? 500 : 200 }
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(webhooks: [WebhookEndpoint(name: "flaky", url: receiver.url)]) { ledger in
            let (_, coins) = try await ledger.orderAndBuy(user: "w-carol", product: "com.example.coins100", appleId: "apple-w3")
            #expect(try await ledger.submit(user: "w-carol", purchase: coins).outcome == "delivered")
            let spend = try await ledger.post("/v1/users/w-carol/spend", ["unit": "coins", "amount": 10, "spend_id": "w-s2"])
            #expect(spend.status == 200)
            // A deadline, not a sleep: the second refusal comes after the first retry's backoff,
            // which a loaded CI machine once stretched past 20 s.
            try await ledger.eventually("the first message is refused at least twice", within: .seconds(90)) {
                receiver.arrivals.filter { $0.status == 500 }.count >= 2
            }
            let status = try await ledger.pool.withConnection { try WebhookStatus.endpoints(on: $0) }
            #expect(status.first?.backlog == 3, "\(status)")
            #expect(status.first?.lastError == "HTTP 500")
            // Nothing of carol's overtakes the refused message.
            #expect(Set(receiver.arrivals.map(\.id)).count == 1)
            let feed = try await ledger.get("/v1/metrics".replacingOccurrences(of: "/v1", with: ""), token: nil)
            #expect(feed.status == 200)
            failing.on = false
            try await ledger.eventually("everything arrives once the endpoint answers", within: .seconds(30)) {
                receiver.acknowledged.count == 3
            }
            #expect(receiver.acknowledged.map(\.type) == ["purchase.delivered", "balance.changed", "balance.changed"])
            try await ledger.eventually("the last pass is recorded") {
                try await ledger.pool.withConnection { try WebhookStatus.endpoints(on: $0) }.first?.backlog == 0
            }
        }
    }

    @Test("a message refused for one user holds back only that user's later messages: other users' go on")
    func othersGoOn() async throws {
        // Refuses every message up to a position (at first all of them; then up to dave's last
        // event, so only dave's; then none): the receiver sees ids, whose first part is the
        // ledger event's position.
        let refusedUpTo = Mutex<Int>(.max)
        let receiver = WebhookReceiver(signer: try Self.signer()) { id in
            Self.order(id).0 <= refusedUpTo.withLock { $0 } ? 500 : 200
        }
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)]) { ledger in
            let (_, daves) = try await ledger.orderAndBuy(user: "w-dave", product: "com.example.coins100", appleId: "apple-w4")
            #expect(try await ledger.submit(user: "w-dave", purchase: daves).outcome == "delivered")
            #expect(try await ledger.post("/v1/users/w-dave/spend", ["unit": "coins", "amount": 10, "spend_id": "w-s3"]).status == 200)
            try await ledger.eventually("dave's first message is refused") {
                receiver.arrivals.contains { $0.status == 500 && $0.data["user_id"] as? String == "w-dave" }
            }
            let davesLast = try await ledger.pool.withConnection { try $0.query("SELECT max(position) FROM events")[0].decode(0, as: Int64.self) }
            refusedUpTo.withLock { $0 = Int(davesLast) }
            // Erin buys and spends after dave's refused messages: hers arrive while his wait.
            let (_, erins) = try await ledger.orderAndBuy(user: "w-erin", product: "com.example.coins100", appleId: "apple-w5")
            #expect(try await ledger.submit(user: "w-erin", purchase: erins).outcome == "delivered")
            #expect(try await ledger.post("/v1/users/w-erin/spend", ["unit": "coins", "amount": 5, "spend_id": "w-s4"]).status == 200)
            try await ledger.eventually("erin's messages arrive while dave's are refused", within: .seconds(30)) {
                receiver.acknowledged.filter { $0.data["user_id"] as? String == "w-erin" }.count == 3
            }
            #expect(receiver.acknowledged.allSatisfy { $0.data["user_id"] as? String != "w-dave" })
            // Only dave's first message was tried: his later ones wait behind it.
            #expect(Set(receiver.arrivals.filter { $0.data["user_id"] as? String == "w-dave" }.map(\.id)).count == 1)
            refusedUpTo.withLock { $0 = 0 }
            try await ledger.eventually("dave's arrive once the endpoint takes them", within: .seconds(60)) {
                receiver.acknowledged.filter { $0.data["user_id"] as? String == "w-dave" }.count == 3
            }
            let daveIds = receiver.acknowledged.filter { $0.data["user_id"] as? String == "w-dave" }.map(\.id)
            #expect(daveIds == daveIds.sorted { Self.order($0) < Self.order($1) }, "dave's in log order")
        }
    }

    @Test("a long poll returns as soon as a message exists, and an empty one after its wait")
    func longPoll() async throws {
        try await LedgerHarness.with { ledger in
            let started = ContinuousClock.now
            let empty = try await ledger.get("/v1/events?after=0&wait=1")
            #expect(empty.status == 200)
            #expect((empty.json["events"] as? [Any])?.isEmpty == true)
            #expect(empty.json["next"] as? Int == 0)
            #expect(ContinuousClock.now - started >= .milliseconds(900))
            let (_, coins) = try await ledger.orderAndBuy(user: "w-dave", product: "com.example.coins100", appleId: "apple-w4")
            #expect(try await ledger.submit(user: "w-dave", purchase: coins).outcome == "delivered")
            let head = try await ledger.get("/v1/events?after=0")
            let after = try #require(head.json["next"] as? Int)
            #expect(after > 0)
            // Held until the spend's message exists: woken by the runner, well before its 30 s.
            // Whether the poll is held before the spend or starts after it, it answers with the
            // spend's message, and well before its 30 s.
            async let waiting = ledger.get("/v1/events?after=\(after)&wait=30")
            let spend = try await ledger.post("/v1/users/w-dave/spend", ["unit": "coins", "amount": 5, "spend_id": "w-poll"])
            #expect(spend.status == 200)
            let spent = ContinuousClock.now
            let page = try await waiting
            let events = page.json["events"] as? [[String: Any]] ?? []
            #expect(events.map { $0["type"] as? String ?? "" } == ["balance.changed"], "the wait ended with the spend's message, not empty at its end")
            // Told from the hold's end (30 s) with room for a loaded machine.
            #expect(ContinuousClock.now - spent < .seconds(20))
            for bad in ["after=-1", "limit=0", "limit=1001", "wait=31", "after=x"] {
                let answer = try await ledger.get("/v1/events?\(bad)")
                #expect(answer.status == 400, "\(bad)")
                #expect((answer.json["error"] as? [String: Any])?["code"] as? String == "invalid_request")
            }
            #expect(try await ledger.get("/v1/events", token: LedgerHarness.supportToken).status == 403)
        }
    }
}

/// A switch tests flip while a receiver reads it.
final class FailSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var value = true
    var on: Bool {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
