import AppStoreClient
import EventStore
import Foundation
@testable import LedgerHTTP
import Ledger
import LedgerWebhooks
import Postgres
import Primitives
import Testing

/// `serve` publishes the chain's digest as it runs (LEDGER_DIGEST_INTERVAL, LEDGER_DIGEST_FILE,
/// the `ledger.digest` webhook message): copies outside the database that a restored log is later
/// proved against.
@Suite("Digests published as the ledger runs")
struct DigestPublishingTests {
    /// The lines of the digest file, each `POSITION:HASH TIME`.
    static func lines(_ file: URL) -> [String] {
        ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("each interval in which the verified head moved gives one digest: a line in the file, a signed ledger.digest to the endpoint, a row, and the log holds it")
    func published() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("digests-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let receiver = WebhookReceiver(signer: try WebhookFlowTests.signer())
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(
            webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)],
            digests: DigestPublisher.Settings(interval: .seconds(1), file: file.path)
        ) { ledger in
            // Given a purchase: the head moves, and the chain watch verifies it.
            let (_, coins) = try await ledger.orderAndBuy(user: "d-alice", product: "com.example.coins100", appleId: "apple-d1")
            #expect(try await ledger.submit(user: "d-alice", purchase: coins).outcome == "delivered")
            try await ledger.eventually("a digest is published", within: .seconds(30)) { !Self.lines(file).isEmpty }

            // Then its line names a position and hash the log holds, at a time to the second.
            let first = try #require(Self.lines(file).first)
            let match = try #require(first.wholeMatch(of: /([0-9]+):([0-9a-f]{64}) ([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)/))
            let digest = try #require(ChainDigest(parsing: "\(match.1):\(match.2)"))
            #expect(try await ChainVerifier(pool: ledger.pool).check(digest) == .extends)
            // A digest at another position of the same log, or with another hash, is not its.
            #expect(try await ChainVerifier(pool: ledger.pool).check(ChainDigest(position: digest.position + 1_000, hash: digest.hash)) != .extends)

            // The endpoint got it as `ledger.digest`, signed, its id naming position and hash.
            let isFirst: @Sendable (WebhookReceiver.Arrival) -> Bool = {
                $0.type == "ledger.digest" && $0.data["position"] as? Int == Int(digest.position)
            }
            try await ledger.eventually("the endpoint acknowledges the digest", within: .seconds(30)) {
                receiver.acknowledged.contains(where: isFirst)
            }
            let told = try #require(receiver.acknowledged.first(where: isFirst))
            #expect(told.signatureValid)
            #expect(told.id == "dig_\(digest.position)_\(Hex.encode(digest.hash.prefix(8)))")
            #expect(told.data["position"] as? Int == Int(digest.position))
            #expect(told.data["hash"] as? String == Hex.encode(digest.hash))
            #expect(Set(told.data.keys) == ["position", "hash"])
            #expect((told.json["timestamp"] as? String)?.hasPrefix(String(match.3.dropLast())) == true)
            // It is not a ledger event's message: the feed does not serve it.
            let feed = try await WebhookFlowTests.feed(ledger)
            #expect(!feed.contains { $0["type"] as? String == "ledger.digest" })

            // No new event: no new digest, however many intervals pass. Apple's notification of the
            // purchase may land after the first digest and move the head once more: the digest of
            // the head as it settles is awaited first, and the quiet time counts only if nothing
            // was appended during it.
            try await ledger.eventually("a digest of the settled head", within: .seconds(30)) {
                let head = try await Self.head(ledger.pool)
                return try await Self.digestRows(ledger.pool).last == head
            }
            // A full interval later, by the published row's own time, a check publishes nothing
            // while the head stays where it was: asked directly, not waited out.
            let settled = try await Self.head(ledger.pool)
            let rows = try await Self.digestRows(ledger.pool)
            try await ledger.eventually("an interval has passed since the last digest", within: .seconds(10)) {
                let last: Int64 = try await ledger.pool.withConnection {
                    try $0.query("SELECT max(published_at_ms) FROM ledger_digests")[0].decode(0)
                }
                return WallClock.system() - last >= 1_000
            }
            let checker = DigestPublisher(
                pool: ledger.pool, settings: DigestPublisher.Settings(interval: .seconds(1), file: file.path), clock: .system,
                logger: ledger.logger)
            let again = try await checker.publishIfDue()
            if try await Self.head(ledger.pool) == settled {
                #expect(again == nil, "published \(String(describing: again)) with the head unmoved")
                #expect(Self.lines(file).count == rows.count)
                #expect(try await Self.digestRows(ledger.pool) == rows)
            }

            // Another purchase: a second digest, further on.
            let (_, more) = try await ledger.orderAndBuy(user: "d-bob", product: "com.example.coins100", appleId: "apple-d2")
            #expect(try await ledger.submit(user: "d-bob", purchase: more).outcome == "delivered")
            try await ledger.eventually("a second digest is published", within: .seconds(30)) { Self.lines(file).count >= 2 }
            let lastLine = try #require(Self.lines(file).last)
            let second = try #require(ChainDigest(parsing: String(lastLine.split(separator: " ")[0])))
            #expect(second.position > digest.position)
            #expect(try await ChainVerifier(pool: ledger.pool).check(second) == .extends)
            // Every digest reaches the endpoint, once each.
            let published = try await Self.digestRows(ledger.pool)
            try await ledger.eventually("the endpoint acknowledges every digest", within: .seconds(30)) {
                Set(receiver.acknowledged.filter { $0.type == "ledger.digest" }.compactMap { $0.data["position"] as? Int })
                    .isSuperset(of: published.map(Int.init))
            }
        }
    }

    @Test("a bad LEDGER_DIGEST_INTERVAL or an unwritable LEDGER_DIGEST_FILE is refused at start, naming the setting; 0 publishes nothing")
    func configuration() throws {
        for (environment, named) in [
            (["LEDGER_DIGEST_INTERVAL": "hourly"], "LEDGER_DIGEST_INTERVAL"),
            (["LEDGER_DIGEST_INTERVAL": "-5"], "LEDGER_DIGEST_INTERVAL"),
            (["LEDGER_DIGEST_FILE": "/nonexistent-folder-\(UUID().uuidString)/digests.txt"], "LEDGER_DIGEST_FILE"),
        ] {
            #expect {
                _ = try ServerConfiguration.digests(environment)
            } throws: { error in
                "\(error)".contains(named)
            }
        }
        #expect(try ServerConfiguration.digests(["LEDGER_DIGEST_INTERVAL": "0"]) == nil)
        let standard = try #require(try ServerConfiguration.digests([:]))
        #expect(standard.interval == .seconds(3_600))
        #expect(standard.file == nil)
    }

    /// The log's head position.
    static func head(_ pool: ConnectionPool) async throws -> Int64 {
        try await pool.withConnection { try $0.query("SELECT coalesce(max(position), 0) FROM events")[0].decode(0) }
    }

    static func digestRows(_ pool: ConnectionPool) async throws -> [Int64] {
        try await pool.withConnection { connection in
            try connection.query("SELECT position FROM ledger_digests ORDER BY position").map { try $0.decode(0) }
        }
    }
}
