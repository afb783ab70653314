import AppleSimulator
import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerWebhooks
import LedgerWorkers
import Postgres
import Primitives
import Testing

/// The restore drill of docs/backup-and-restore.md, on a real PostgreSQL archiving to a real
/// pgBackRest repository: purchases and spends, a full backup, more purchases, an operator's
/// mistake, a restore to just before the purchases it undoes; then the loss of the data folder
/// under a running server and a restore of the latest. Each time: the chain verifies, a digest
/// published before the loss proves the restored log and a later one says it was lost, webhook
/// receivers get the events written after the restore under new ids, and a feed consumer is
/// told 409 and resumes.
@Suite("Backup and restore drill (pgBackRest)", .serialized, BackupSet.required)
struct RestoreDrillTests {
    /// The digests `serve` appended to the file, in order.
    static func digests(_ file: URL) -> [ChainDigest] {
        ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { $0.split(separator: " ").first.flatMap { ChainDigest(parsing: String($0)) } }
    }

    /// Buys a pack of coins for `user` through an order, as the app does; the delivery's answer.
    @discardableResult
    static func buy(_ ledger: LedgerHarness, _ user: String, appleId: String) async throws -> PurchaseResult {
        let (_, purchase) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: appleId)
        let answer = try await ledger.submit(user: user, purchase: purchase)
        #expect(answer.outcome == "delivered", "\(answer.json)")
        return purchase
    }

    /// `user`'s coins, as the API answers.
    static func coins(_ ledger: LedgerHarness, _ user: String) async throws -> Int? {
        let answer = try await ledger.get("/v1/users/\(user)")
        return (answer.json["balances"] as? [String: Any])?["coins"] as? Int
    }

    /// `purchase-ledger reconcile --since` a day back, as its command runs it, recovering
    /// purchases however recent (the drill's were made seconds before the loss).
    static func reconcile(_ ledger: LedgerHarness) async throws -> Reconciler.Summary {
        let service = ledger.server.service
        let reconciler = Reconciler(service: service, clients: try #require(service.serverAPI), logger: ledger.logger, recoveryGrace: .zero)
        let summaries = try await reconciler.run(sinceMs: service.clock() - 86_400_000, environments: [.production])
        return try #require(summaries.first)
    }

    /// Returns once the database's clock has passed the next whole second: pgBackRest compares
    /// a restore's target with backups' ends in whole seconds, so the target and what comes
    /// before and after it must not share one.
    static func passSecond(_ ledger: LedgerHarness) async throws {
        let clock: @Sendable () async throws -> Double = {
            try await ledger.pool.withConnection { try $0.query("SELECT extract(epoch FROM clock_timestamp())::float8")[0].decode(0) }
        }
        let start = try await clock()
        try await ledger.eventually("the database's clock passes the next second", within: .seconds(10)) {
            try await clock() >= start.rounded(.down) + 1.05
        }
    }

    /// The log's head position and hash, as stored.
    static func head(_ pool: ConnectionPool) async throws -> (position: Int64, hash: String) {
        try await pool.withConnection { connection in
            let row = try connection.query("SELECT position, encode(hash, 'hex') FROM events ORDER BY position DESC LIMIT 1")[0]
            return (try row.decode(0), try row.decode(1))
        }
    }

    /// Waits for a digest at or past `position` among the file's lines after its first `skipping`
    /// (those published before a restore name the history it undid); returns the first such.
    static func digest(reaching position: Int64, in file: URL, skipping: Int = 0, _ ledger: LedgerHarness) async throws -> ChainDigest {
        try await ledger.eventually("a digest reaching \(position) is published", within: .seconds(60)) {
            Self.digests(file).dropFirst(skipping).contains { $0.position >= position }
        }
        return try #require(Self.digests(file).dropFirst(skipping).first { $0.position >= position })
    }

    /// Makes the server archive what it has written, and waits until the archive holds it: the
    /// WAL segment switched to now is named by `pg_stat_archiver` as archived.
    static func archiveNow(_ pool: ConnectionPool, _ ledger: LedgerHarness) async throws {
        let segment: String = try await pool.withConnection { try $0.query("SELECT pg_walfile_name(pg_switch_wal())")[0].decode(0) }
        try await ledger.eventually("WAL segment \(segment) is archived", within: .seconds(60)) {
            let archived: String? = try await pool.withConnection { try $0.query("SELECT last_archived_wal FROM pg_stat_archiver")[0].decode(0) }
            return (archived ?? "") >= segment
        }
    }

    @Test("a restore to a time and a restore after the data folder's loss: the chain verifies, digests prove and tell, receivers get new ids, the feed says history diverged", .timeLimit(.minutes(10)))
    func drill() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("drill-digests-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let receiver = WebhookReceiver(signer: try WebhookFlowTests.signer())
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await BackupSet.with(["archive_timeout=1"]) { set in
            try await LedgerHarness.with(
                database: set.databaseURL, askApple: true, webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)],
                digests: DigestPublisher.Settings(interval: .seconds(1), file: file.path)
            ) { ledger in
                // Purchases and a spend; then a full backup, taken while purchases and spends go on.
                try await Self.buy(ledger, "r-alice", appleId: "apple-r1")
                try await Self.buy(ledger, "r-bob", appleId: "apple-r2")
                #expect(try await ledger.post("/v1/users/r-alice/spend", ["unit": "coins", "amount": 30, "spend_id": "r-s1"]).status == 200)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await set.run("full") }
                    for index in 0..<3 {
                        group.addTask {
                            try await Self.buy(ledger, "r-busy\(index)", appleId: "apple-b\(index)")
                            let spent = try await ledger.post("/v1/users/r-busy\(index)/spend", ["unit": "coins", "amount": 10, "spend_id": "r-b\(index)"])
                            #expect(spent.status == 200)
                        }
                    }
                    try await group.waitForAll()
                }
                for index in 0..<3 { #expect(try await Self.coins(ledger, "r-busy\(index)") == 90) }

                // A time before the first backup: pgBackRest's own error, shown, and the server
                // is left as it was.
                let early = try await BackupSet.tool(["restore", set.folder, "--time", "2020-01-01 00:00:00+00"])
                #expect(early.exit != .success)
                #expect(early.output.contains("unable to find backup set"), "\(early.output)")
                let (_, afterRefusal) = try await ledger.orderAndBuy(user: "r-bob", product: "com.example.coins100", appleId: "apple-r2")
                #expect(try await ledger.submit(user: "r-bob", purchase: afterRefusal).outcome == "delivered")

                // More purchases after the backup; a digest covers them; a consumer reads them.
                try await Self.buy(ledger, "r-carol", appleId: "apple-r3")
                // A digest published before the target, of a head the target keeps.
                let before = try await Self.digest(reaching: try await Self.head(ledger.pool).position, in: file, ledger)
                // The target and the head at it, in one statement: what commits later is undone.
                try await Self.passSecond(ledger)
                let (target, kept): (String, (position: Int64, hash: String)) = try await ledger.pool.withConnection { connection in
                    let row = try connection.query("""
                        SELECT now()::text, position, encode(hash, 'hex') FROM events ORDER BY position DESC LIMIT 1
                        """)[0]
                    return (try row.decode(0), (try row.decode(1), try row.decode(2)))
                }
                #expect(before.position <= kept.position)
                try await Self.passSecond(ledger)

                // Purchases after the target, which the restore undoes; a digest covers them, the
                // endpoint and a consumer hear of them.
                let daves = try await Self.buy(ledger, "r-dave", appleId: "apple-r4")
                try await Self.buy(ledger, "r-alice", appleId: "apple-r1")
                #expect(try await Self.coins(ledger, "r-alice") == 170)
                let lostHead = try await Self.head(ledger.pool)
                let after = try await Self.digest(reaching: lostHead.position, in: file, ledger)
                let publishedBeforeRestore = Self.digests(file).count
                #expect(after.position > before.position)
                let consumer = try await WebhookFlowTests.feed(ledger)
                let consumerLast = try #require(consumer.last?["data"] as? [String: Any])
                let consumerPosition = try #require(consumerLast["position"] as? Int)
                let consumerHash = try #require(consumerLast["hash"] as? String)
                #expect(consumerPosition > Int(kept.position))
                try await ledger.eventually("the endpoint acknowledges every message so far", within: .seconds(60)) {
                    Set(receiver.acknowledged.map(\.id)).isSuperset(of: consumer.compactMap { $0["id"] as? String })
                }
                let heardBefore = Set(receiver.acknowledged.map(\.id))

                // The operator's mistake, as the owner: events deleted with the triggers off.
                try await ledger.pool.withConnection { connection in
                    try connection.transaction { connection in
                        _ = try connection.execute("SET LOCAL session_replication_role = replica")
                        _ = try connection.execute("DELETE FROM events WHERE position > \(kept.position - 2)")
                    }
                }

                // Restore to the target, with every server stopped, check it before any server
                // (or Apple's notifications) writes again, and start again.
                try await ledger.restart {
                    try await set.run("restore", "--time", target)
                    try await Self.expectRestored(ledger, proving: before, lost: after, head: kept, exactly: true)
                }

                // The feed consumer holding a lost event: 409 with the head, then it resumes.
                let diverged = try await ledger.get("/v1/events?after=\(consumerPosition)&after_hash=\(consumerHash)")
                #expect(diverged.status == 409)
                #expect(diverged.errorCode == "history_diverged")
                let told = try #require(diverged.json["head"] as? [String: Any])
                #expect(told["position"] as? Int ?? 0 >= Int(kept.position))
                let resumed = try await ledger.get("/v1/events?after=\(kept.position)&after_hash=\(kept.hash)")
                #expect(resumed.status == 200)

                // What Apple knows comes back: Alice's second pack to Alice (her Apple account's
                // earlier purchase names her), Dave's unclaimed (his order, his account's only
                // purchase, were lost) until his app submits it again; once, however often asked.
                #expect(try await Self.coins(ledger, "r-alice") == 70)
                let recovered = try await Self.reconcile(ledger)
                #expect(recovered.recovered == RecoveredPurchases(delivered: 1, unclaimed: 1), "\(recovered)")
                #expect(try await Self.coins(ledger, "r-alice") == 170)
                #expect(try await Self.coins(ledger, "r-dave") ?? 0 == 0)
                let resubmitted = try await ledger.submit(user: "r-dave", purchase: daves)
                #expect(resubmitted.outcome == "delivered", "\(resubmitted.json)")
                #expect(try await Self.coins(ledger, "r-dave") == 100)
                let again = try await Self.reconcile(ledger)
                #expect(again.recovered == RecoveredPurchases(), "\(again)")
                #expect(try await Self.coins(ledger, "r-alice") == 170)

                // A purchase after the restore takes a lost event's position under a new id, and
                // the endpoint, which acknowledged the lost one, takes the new one too.
                try await Self.buy(ledger, "r-erin", appleId: "apple-r5")
                let newHead = try await Self.head(ledger.pool)
                #expect(newHead.position > kept.position, "the new events take positions lost events had")
                let reborn = try await WebhookFlowTests.feed(ledger).filter { ($0["data"] as? [String: Any])?["position"] as? Int ?? 0 > Int(kept.position) }
                #expect(!reborn.isEmpty)
                let rebornIds = Set(reborn.compactMap { $0["id"] as? String })
                #expect(rebornIds.isDisjoint(with: heardBefore), "an id of a lost event was given again")
                try await ledger.eventually("the endpoint acknowledges the events written after the restore", within: .seconds(60)) {
                    Set(receiver.acknowledged.map(\.id)).isSuperset(of: rebornIds)
                }

                // The total loss: the data folder deleted under the running server, the latest
                // restored. What was archived comes back, the digest of it proves it.
                try await Self.buy(ledger, "r-frank", appleId: "apple-r6")
                let archivedHead = try await Self.head(ledger.pool)
                let latest = try await Self.digest(reaching: archivedHead.position, in: file, skipping: publishedBeforeRestore, ledger)
                try await Self.archiveNow(ledger.pool, ledger)
                let lostGina = try await Self.buy(ledger, "r-gina", appleId: "apple-r7")
                try await ledger.restart {
                    try await set.run("lose")
                    try await set.run("restore", "--latest")
                    try await Self.expectRestored(ledger, proving: latest, lost: nil, head: archivedHead, exactly: false)
                }
                let survived = try await ledger.get("/v1/events?after=\(archivedHead.position)&after_hash=\(archivedHead.hash)")
                #expect(survived.status == 200, "the consumer's last event survived the loss")
                // Gina's purchase came after the archive was made sure of: the loss took it or
                // not, depending on the archiver's last second. Either way, after reconciliation
                // and her app's resubmission, nothing Apple knows stays lost, and nothing twice.
                let ginas = lostGina
                let recoveredAfterLoss = try await Self.reconcile(ledger)
                #expect(recoveredAfterLoss.recovered.delivered + recoveredAfterLoss.recovered.unclaimed <= 1, "\(recoveredAfterLoss)")
                let resubmittedGina = try await ledger.submit(user: "r-gina", purchase: ginas)
                #expect(["delivered", "already_delivered"].contains(resubmittedGina.outcome ?? ""), "\(resubmittedGina.json)")
                #expect(try await Self.coins(ledger, "r-gina") == 100)
                try await Self.buy(ledger, "r-frank", appleId: "apple-r6")
            }
        }
    }

    /// The checks after a restore: the chain verifies from the first event, the digest published
    /// before the loss is held, the one published after it (if any) is past the log's end, and
    /// the log ends where it stood at the restore point.
    /// `exactly`: the log ends at `head` (a restore to a time read with the head); else at or past
    /// it (the latest archived, which Apple's late notifications may have extended).
    static func expectRestored(
        _ ledger: LedgerHarness, proving kept: ChainDigest, lost: ChainDigest?, head: (position: Int64, hash: String), exactly: Bool
    ) async throws {
        let verifier = ChainVerifier(pool: ledger.pool)
        guard case .verified = try await verifier.verify() else {
            Issue.record("the restored chain does not verify")
            return
        }
        let proved = try await verifier.check(kept)
        #expect(proved == .extends, "digest \(kept): \(proved); head \(head), exactly \(exactly)")
        if let lost {
            #expect(try await verifier.check(lost) == .truncated(head: head.position))
        }
        let now = try await Self.head(ledger.pool)
        if exactly {
            #expect(now.position == head.position && now.hash == head.hash, "restored to \(now), expected \(head)")
        } else {
            #expect(now.position >= head.position, "restored to \(now), expected at least \(head)")
            #expect(try await verifier.check(ChainDigest(position: head.position, hash: Hex.decode(head.hash) ?? [])) == .extends)
        }
    }
}
