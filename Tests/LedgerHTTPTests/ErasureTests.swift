import AppleSimulator
import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import LedgerWebhooks
import Postgres
import Sealing
import Spawning
import TestSupport
import Testing

/// Erasure (docs/erasure.md): `DELETE /v1/users/{user_id}` and `erase-user` destroy the person's
/// key. The id then reads nowhere, the chain verifies, the money stays.
@Suite struct ErasureTests {
    static func erase(_ ledger: LedgerHarness, _ user: String, requestId: String, token: String = LedgerHarness.supportToken) async throws -> LedgerHarness.Answer {
        try await ledger.request(
            .DELETE, "/v1/users/\(user)", body: #"{"reason": "the customer asked (ticket 7)", "request_id": "\#(requestId)"}"#, token: token)
    }

    @Test("support erases a person: the id reads nowhere, older feed messages and redeliveries show erased:SUBJECT, user.erased is told, the chain verifies and revenue is unchanged")
    func erasure() async throws {
        let receiver = WebhookReceiver(signer: try WebhookFlowTests.signer())
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)]) { ledger in
            let (_, coins) = try await ledger.orderAndBuy(user: "erin-e", product: "com.example.coins100", appleId: "apple-erase-1")
            #expect(try await ledger.submit(user: "erin-e", purchase: coins).outcome == "delivered")
            #expect(try await ledger.post("/v1/users/erin-e/spend", ["unit": "coins", "amount": 10, "spend_id": "e-1"]).status == 200)
            let (_, other) = try await ledger.orderAndBuy(user: "stays", product: "com.example.coins100", appleId: "apple-erase-2")
            #expect(try await ledger.submit(user: "stays", purchase: other).outcome == "delivered")
            let revenue = try await ledger.get("/v1/reports/revenue?from=2000-01-01&to=2100-01-01", token: LedgerHarness.financeToken)
            #expect(revenue.status == 200)
            let events = try await ledger.pool.withConnection { try $0.query("SELECT count(*) FROM events").first!.decode(0, as: Int64.self) }

            // Refused: an app's token, an id no one has (nothing recorded), a reason naming the id.
            #expect(try await Self.erase(ledger, "erin-e", requestId: "r-0", token: LedgerHarness.appToken).status == 403)
            let unknown = try await Self.erase(ledger, "nobody-at-all", requestId: "r-1")
            #expect(unknown.status == 404 && unknown.errorCode == "not_found")
            let naming = try await ledger.request(
                .DELETE, "/v1/users/erin-e", body: #"{"reason": "erin-e asked", "request_id": "r-2"}"#, token: LedgerHarness.supportToken)
            #expect(naming.status == 400)
            #expect(try await ledger.pool.withConnection { try $0.query("SELECT count(*) FROM events").first!.decode(0, as: Int64.self) } == events)

            let erased = try await Self.erase(ledger, "erin-e", requestId: "r-3")
            #expect(erased.status == 200, "\(erased.json)")
            let subject = try #require(erased.json["subject"] as? String)
            #expect(subject.count == 27 && erased.json["erased_at"] is String)
            // Again with the same request: the first result. With another: no such user now.
            let again = try await Self.erase(ledger, "erin-e", requestId: "r-3")
            #expect(again.status == 200 && again.json["subject"] as? String == subject && again.json["erased_at"] as? String == erased.json["erased_at"] as? String)
            #expect(try await Self.erase(ledger, "erin-e", requestId: "r-4").status == 404)

            #expect(try await ledger.get("/v1/users/erin-e").status == 404)
            #expect(try await ledger.get("/v1/timelines/users/erin-e", token: LedgerHarness.supportToken).status == 404)
            // Her purchase's timeline is still there, under her subject.
            let purchase = try await ledger.get("/v1/timelines/transactions/\(coins.transactionId)", token: LedgerHarness.supportToken)
            #expect(purchase.status == 200)
            let summaries = (purchase.json["entries"] as? [[String: Any]] ?? []).compactMap { $0["summary"] as? String }
            #expect(summaries.contains { $0.contains("erased:\(subject)") } && !summaries.contains { $0.contains("erin-e") })

            // The feed: what named her names her subject; user.erased is told with the subject only.
            try await ledger.eventually("user.erased is in the feed") {
                try await WebhookFlowTests.feed(ledger).contains { $0["type"] as? String == "user.erased" }
            }
            let feed = try await WebhookFlowTests.feed(ledger)
            let named = feed.compactMap { ($0["data"] as? [String: Any])?["user_id"] as? String }
            #expect(Set(named) == ["erased:\(subject)", "stays"])
            let told = try #require(feed.first { $0["type"] as? String == "user.erased" })
            #expect((told["data"] as? [String: Any])?["subject"] as? String == subject)
            #expect((told["data"] as? [String: Any])?["user_id"] == nil)
            try await ledger.eventually("user.erased reaches the endpoint", within: .seconds(30)) {
                receiver.acknowledged.contains { $0.type == "user.erased" }
            }

            // A redelivery of her older messages shows her subject, not her id.
            let before = receiver.arrivals.count
            let redeliver = try await LedgerProcess.run(
                ["webhooks", "redeliver", "backend", "--from", "1"], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(redeliver.exit == ProcessExit(status: 0, signaled: false), "\(redeliver.output)")
            try await ledger.eventually("the redelivery arrives", within: .seconds(30)) { receiver.arrivals.count >= before + feed.count }
            let redelivered = receiver.arrivals.dropFirst(before).compactMap { $0.data["user_id"] as? String }
            #expect(redelivered.contains("erased:\(subject)") && !redelivered.contains("erin-e"))

            // The chain verifies, revenue is what it was, and no table holds her id.
            let verify = try await LedgerProcess.run(["verify"], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(verify.exit == ProcessExit(status: 0, signaled: false), "\(verify.output)")
            let after = try await ledger.get("/v1/reports/revenue?from=2000-01-01&to=2100-01-01", token: LedgerHarness.financeToken)
            #expect(NSDictionary(dictionary: after.json).isEqual(to: revenue.json))
            #expect(try await SealedPeopleTests.tablesHolding("erin-e", on: ledger.pool) == [])

            // The same id later is a new user, with nothing of the erased one's.
            let (_, later) = try await ledger.orderAndBuy(user: "erin-e", product: "com.example.coins100", appleId: "apple-erase-3")
            #expect(try await ledger.submit(user: "erin-e", purchase: later).outcome == "delivered")
            let view = try await ledger.get("/v1/users/erin-e")
            #expect((view.json["balances"] as? [String: Any])?["coins"] as? Int == 100)
            #expect(try await ledger.recorded("erin-e").contains(subject) == false)
        }
    }

    @Test("what waits or comes after an erasure: a receipt pending at Apple is settled user_erased without asking Apple; a refund Apple sends later is recorded under erased:SUBJECT, its notification sealed, her token nowhere in clear")
    func afterTheErasure() async throws {
        try await LedgerHarness.with { ledger in
            let (order, ads) = try await ledger.orderAndBuy(user: "after-e", product: "com.example.removeads", appleId: "apple-after-e")
            let token = try #require(order["app_account_token"] as? String)
            let delivered = try await ledger.post("/v1/transactions", ["user_id": "after-e", "signed_transaction": ads.signedTransaction])
            #expect(delivered.status == 200 && delivered.outcome == "delivered", "\(delivered.json)")
            // A receipt of hers waits for an Apple that is down, and she is erased meanwhile.
            let (_, coins) = try await ledger.orderAndBuy(user: "after-e", product: "com.example.coins100", appleId: "apple-after-e")
            ledger.simulator.injectFailure(FailureRule(.status(21005), .next(100_000)))
            #expect(try await ledger.submit(user: "after-e", purchase: coins).status == 202)
            let handle = try await ledger.recorded("after-e")
            let erased = try await Self.erase(ledger, "after-e", requestId: "ae-1")
            #expect(erased.status == 200, "\(erased.json)")
            let subject = try #require(erased.json["subject"] as? String)

            try await ledger.eventually("the worker settles her pending receipt", within: .seconds(30)) {
                try await ledger.count("DeliveryRejected") == 1
            }
            let rejection = try await ledger.events("DeliveryRejected").compactMap { if case .deliveryRejected(let r) = $0 { r } else { nil } }
            #expect(rejection.map(\.code) == [.userErased] && rejection.map(\.userId) == [handle])
            #expect(try await ledger.count("PurchaseDelivered") == 1, "nothing delivered to no one")
            ledger.simulator.clearFailures()

            // Apple refunds her purchase weeks later: the money moves, under her subject only.
            _ = try await ledger.simulator.refund(transactionId: ads.transactionId, reason: 1)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            let refund = try await ledger.events("PurchaseRefunded").compactMap { if case .purchaseRefunded(let r) = $0 { r } else { nil } }
            #expect(refund.map(\.userId) == [handle])
            let notification = try #require(try await ledger.events("AppleNotificationReceived").compactMap {
                if case .appleNotificationReceived(let n) = $0 { n } else { nil }
            }.first)
            let stored = try await ledger.pool.withConnection { connection in
                try connection.query("SELECT content FROM documents WHERE sha256 = decode(\(notification.documentSha256), 'hex')").first?.decode(0, as: [UInt8].self)
            }
            #expect(try #require(stored).starts(with: Array("PLSEAL1\(subject)".utf8)), "sealed for her, under a key never kept")
            #expect(try await ledger.server.service.documents.get(notification.documentSha256) == Array("erased:\(subject)".utf8))
            #expect(try await SealedPeopleTests.tablesHolding(token, on: ledger.pool) == [])
            #expect(try await SealedPeopleTests.tablesHolding("after-e", on: ledger.pool) == [])
        }
    }

    @Test("each erasure is written to LEDGER_ERASURE_JOURNAL (subject, time, request id; never the id); a database back to before an erasure (the key there, no UserErased) is erased again by serve at start and by `erasure reapply`, once")
    func journalOutlivesARestore() async throws {
        try await TemporaryFolder.with("erasure-journal") { folder in
            let journal = folder.appendingPathComponent("erasures.jsonl").path
            try await TestDatabase.withSchema { conninfo, _ in
                let (first, second): (String, String) = try await LedgerHarness.with(database: conninfo, erasureJournal: journal) { ledger in
                    for user in ["jo-erased", "jo-restored", "jo-restored-2"] {
                        let (_, coins) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-\(user)")
                        #expect(try await ledger.submit(user: user, purchase: coins).outcome == "delivered")
                    }
                    let erased = try await Self.erase(ledger, "jo-erased", requestId: "j-1")
                    #expect(erased.status == 200, "\(erased.json)")
                    let lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n")
                    let subject = try #require(erased.json["subject"] as? String)
                    #expect(lines.count == 1 && lines[0].contains(subject) && lines[0].contains("j-1") && !lines[0].contains("jo-erased"), "\(lines)")
                    return (
                        try #require(Handle.subject(of: try await ledger.recorded("jo-restored"))).rawValue,
                        try #require(Handle.subject(of: try await ledger.recorded("jo-restored-2"))).rawValue)
                }
                // A restore to before an erasure looks exactly so: the person's key is back and
                // the log lacks its UserErased, while the journal, outside the database, kept it.
                func journalize(_ subject: String, _ request: String) throws {
                    let handle = try #require(FileHandle(forWritingAtPath: journal))
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data(#"{"subject":"\#(subject)","erased_at_ms":1767225600000,"request_id":"\#(request)"}"#.utf8 + [0x0A]))
                    try handle.close()
                }
                try journalize(first, "j-2")
                try await LedgerHarness.with(database: conninfo, erasureJournal: journal) { ledger in
                    // serve applied its journal before serving.
                    #expect(try await ledger.get("/v1/users/jo-restored").status == 404)
                    #expect(try await ledger.get("/v1/users/jo-restored-2").status == 200)
                    #expect(try await ledger.count("UserErased") == 2)
                    try await ledger.eventually("the erasure done again is told") {
                        try await WebhookFlowTests.feed(ledger).contains {
                            $0["type"] as? String == "user.erased" && ($0["data"] as? [String: Any])?["subject"] as? String == first
                        }
                    }

                    // Another server's journal, applied by hand; then again, which changes nothing.
                    try journalize(second, "j-3")
                    let environment = ["DATABASE_URL": ledger.conninfo, "APPLE_BUNDLE_ID": LedgerHarness.bundleId]
                    let run = try await LedgerProcess.run(["erasure", "reapply", journal], environment: environment)
                    #expect(run.exit == ProcessExit(status: 0, signaled: false), "\(run.output)")
                    #expect(run.output.contains("erasures listed: 3; keys destroyed again: 1; UserErased recorded again: 1"), "\(run.output)")
                    #expect(try await ledger.get("/v1/users/jo-restored-2").status == 404)
                    let again = try await LedgerProcess.run(["erasure", "reapply", journal], environment: environment)
                    #expect(again.output.contains("erasures listed: 3; keys destroyed again: 0; UserErased recorded again: 0"), "\(again.output)")
                    #expect(try await ledger.count("UserErased") == 3)
                    let verify = try await LedgerProcess.run(["verify"], environment: ["DATABASE_URL": ledger.conninfo])
                    #expect(verify.exit == ProcessExit(status: 0, signaled: false), "\(verify.output)")
                }
            }
        }
    }

    @Test("erase-user forgets a person from the command line; an unknown id exits 1; one recorded in clear before erasure came exits 2 and is refused over HTTP with 409")
    func eraseUserCommand() async throws {
        try await LedgerHarness.with { ledger in
            let (_, coins) = try await ledger.orderAndBuy(user: "cli-person", product: "com.example.coins100", appleId: "apple-erase-cli")
            #expect(try await ledger.submit(user: "cli-person", purchase: coins).outcome == "delivered")
            let environment = ["DATABASE_URL": ledger.conninfo, "APPLE_BUNDLE_ID": LedgerHarness.bundleId]
            let run = try await LedgerProcess.run(["erase-user", "cli-person", "--reason", "asked by e-mail", "--request-id", "c-1"], environment: environment)
            #expect(run.exit == ProcessExit(status: 0, signaled: false), "\(run.output)")
            #expect(run.output.contains("erased: subject s"))
            #expect(try await ledger.get("/v1/users/cli-person").status == 404)
            let unknown = try await LedgerProcess.run(["erase-user", "cli-person", "--reason", "again"], environment: environment)
            #expect(unknown.exit == ProcessExit(status: 1, signaled: false), "\(unknown.output)")

            // A user the log holds in clear (recorded through the service, as before erasure came).
            _ = try await ledger.server.service.createOrder(
                userId: "old-timer", productId: "com.example.coins100", quantity: 1, metadata: RequestMetadata(actor: "test"))
            let old = try await LedgerProcess.run(["erase-user", "old-timer", "--reason", "asked"], environment: environment)
            #expect(old.exit == ProcessExit(status: 2, signaled: false), "\(old.output)")
            let refused = try await Self.erase(ledger, "old-timer", requestId: "o-1")
            #expect(refused.status == 409 && refused.errorCode == "recorded_before_erasure")
            #expect(try await ledger.get("/v1/users/old-timer").status == 200)
        }
    }

    @Test("a log an earlier release recorded keeps ids as they are until `erasure begin`: then the people met are sealed and can be erased, the earlier ones still refused")
    func aLogRecordedBeforeBeginsWhenTold() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            let log = LedgerLog(store: EventStore(pool: pool, logger: TestDatabase.logger))
            try await log.append(AppsReadModelTests.purchases(of: "before", app: nil, prefix: "old", coins: 100), metadata: RequestMetadata(actor: "test"))
            try await LedgerHarness.with(database: conninfo) { ledger in
                // An earlier release may still serve this log: ids are recorded as they are.
                let (_, coins) = try await ledger.orderAndBuy(user: "meanwhile", product: "com.example.coins100", appleId: "apple-meanwhile")
                #expect(try await ledger.submit(user: "meanwhile", purchase: coins).outcome == "delivered")
                #expect(try await ledger.server.service.people.knownHandle(forUser: "meanwhile") == nil)
                #expect(try await SealedPeopleTests.tablesHolding("meanwhile", on: ledger.pool).contains("events"))
                #expect(try await Self.erase(ledger, "meanwhile", requestId: "m-1").errorCode == "recorded_before_erasure")

                let begin = try await LedgerProcess.run(["erasure", "begin"], environment: ["DATABASE_URL": ledger.conninfo, "APPLE_BUNDLE_ID": LedgerHarness.bundleId])
                #expect(begin.exit == ProcessExit(status: 0, signaled: false), "\(begin.output)")
                #expect(begin.output.contains("erasure begins"))
                // The server sees it within its recheck: the next new person is sealed.
                var index = 0
                try await ledger.eventually("a new person is sealed", within: .seconds(30)) {
                    index += 1
                    _ = try await ledger.post("/v1/orders", ["user_id": "after-\(index)", "product_id": "com.example.coins100"])
                    return try await ledger.server.service.people.knownHandle(forUser: "after-\(index)") != nil
                }
                #expect(try await Self.erase(ledger, "after-\(index)", requestId: "a-1").status == 200)
                #expect(try await Self.erase(ledger, "meanwhile", requestId: "m-2").errorCode == "recorded_before_erasure")
                let again = try await LedgerProcess.run(["erasure", "begin"], environment: ["DATABASE_URL": ledger.conninfo, "APPLE_BUNDLE_ID": LedgerHarness.bundleId])
                #expect(again.output.contains("had begun already"), "\(again.output)")
            }
        }
    }
}
