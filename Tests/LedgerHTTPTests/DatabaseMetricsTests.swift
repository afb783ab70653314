import AppleSimulator
import AsyncHTTPClient
import Foundation
import Ledger
@testable import LedgerHTTP
@testable import LedgerService
import LedgerStore
import LedgerWebhooks
import Logging
import NIOCore
import Postgres
import TestSupport
import Testing

/// The series the alerts read from the database (docs/monitoring.md): in a live `/metrics`, with
/// values that move when what they watch goes wrong; and every metric the alerting rules name is
/// in a live scrape.
@Suite struct DatabaseMetricsTests {
    static let rules = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy/prometheus/purchase-ledger-rules.yml")

    /// The scrape's samples, by series (name and labels) as written.
    static func scrape(_ ledger: LedgerHarness) async throws -> [String: String] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: ledger.base + "/metrics"), timeout: .seconds(30))
        #expect(response.status == .ok)
        let text = String(buffer: try await response.body.collect(upTo: 8 << 20))
        var samples: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return samples
    }

    static func names(_ samples: [String: String]) -> Set<String> {
        Set(samples.keys.map { String($0.prefix { $0 != "{" }) })
    }

    @Test("a live scrape says the database is up, the chain verified, nothing undecided or pending")
    func healthy() async throws {
        try await LedgerHarness.with { ledger in
            _ = try await ledger.post("/v1/orders", ["user_id": "m-ok", "product_id": "com.example.coins100"])
            try await ledger.eventually("the chain check reaches the head") {
                try await Self.scrape(ledger)["ledger_chain_unverified_events"] == "0"
            }
            let samples = try await Self.scrape(ledger)
            #expect(samples["ledger_database_up"] == "1")
            #expect(samples["ledger_chain_broken"] == "0")
            #expect((samples["ledger_chain_verified_position"].flatMap { Int($0) } ?? 0) >= 1, "\(samples)")
            #expect(samples["ledger_undecided_submissions_past_grace"] == "0")
            #expect(samples["ledger_pending_receipts_oldest_seconds"] == "0")
            // At 0 before the first refusal, so the alert's increase() sees the first one.
            #expect(samples["ledger_apple_server_api_unauthorized_total"] == "0")
            // Visible with pg_read_all_stats only; the throwaway cluster has no standby.
            let visible = try await ledger.pool.withConnection {
                try $0.query("SELECT pg_has_role('ledger_app', 'pg_read_all_stats', 'USAGE')")[0].decode(0, as: Bool.self)
            }
            #expect(samples["ledger_database_synchronous_standbys"] == (visible ? "0" : nil), "\(samples)")
        }
    }

    @Test("a submission nothing decided counts once past the grace; a receipt Apple does not answer ages")
    func undecidedAndPending() async throws {
        try await LedgerHarness.with { ledger in
            let service = ledger.server.service
            let (_, abandoned) = try await ledger.orderAndBuy(user: "m-orphan", product: "com.example.coins100", appleId: "apple-m-orphan")
            _ = try await OrphanSubmissionTests.abandon(
                service, user: "m-orphan", kind: .receipt, proof: abandoned.receiptData, transactionId: abandoned.transactionId)
            // The server's worker waits 120 s before taking it over; read here with other graces.
            let past = try await ledger.pool.withConnection { try LedgerReads.standing(on: $0, grace: .zero) }
            #expect(past.undecidedPastGrace == 1)
            let within = try await ledger.pool.withConnection { try LedgerReads.standing(on: $0, grace: .seconds(3600)) }
            #expect(within.undecidedPastGrace == 0)
            #expect(try await Self.scrape(ledger)["ledger_undecided_submissions_past_grace"] == "0", "within the server's grace")

            ledger.simulator.injectFailure(FailureRule(.status(21005), .fraction(1)))
            let (_, purchase) = try await ledger.orderAndBuy(user: "m-pending", product: "com.example.coins100", appleId: "apple-m-pending")
            #expect(try await ledger.submit(user: "m-pending", purchase: purchase).status == 202)
            try await ledger.eventually("the pending receipt's age shows") {
                let samples = try await Self.scrape(ledger)
                // The registry writes its gauges as doubles ("1.0").
                return samples["ledger_pending_receipts"].flatMap(Double.init) == 1
                    && (samples["ledger_pending_receipts_oldest_seconds"].flatMap(Double.init) ?? 0) > 0
            }
        }
    }

    @Test("the chain check's finding shows as ledger_chain_broken 1")
    func chainBroken() async throws {
        try await LedgerHarness.with { ledger in
            _ = try await ledger.post("/v1/orders", ["user_id": "m-chain", "product_id": "com.example.coins100"])
            try await ledger.eventually("the chain check reaches the head") {
                try await Self.scrape(ledger)["ledger_chain_unverified_events"] == "0"
            }
            // The checkpoint's hash no longer the head's: the next event does not follow from it.
            try await ledger.pool.withConnection { try $0.execute("UPDATE chain_checkpoint SET hash = \(Array(repeating: UInt8(7), count: 32))") }
            _ = try await ledger.post("/v1/orders", ["user_id": "m-chain", "product_id": "com.example.coins100"])
            try await ledger.eventually("the check finds it") { try await Self.scrape(ledger)["ledger_chain_broken"] == "1" }
        }
    }

    @Test("serve's history summarizer sums a subscription bought: the gauge goes back to 0 and the sums hold it")
    func historySummed() async throws {
        try await LedgerHarness.with { ledger in
            let (_, bought) = try await ledger.orderAndBuy(user: "m-sub", product: "com.example.pro.monthly", appleId: "apple-m-sub")
            #expect(try await ledger.submit(user: "m-sub", purchase: bought).status == 200)
            let original = bought.transaction.originalTransactionId
            try await ledger.eventually("the summarizer sums it") {
                try await ledger.pool.withConnection {
                    try $0.query("SELECT count(*) FROM history_subscriptions WHERE original_transaction_id = \(original)")[0].decode(0, as: Int64.self)
                } == 1
            }
            try await ledger.eventually("nothing is left to sum") { try await Self.scrape(ledger)["ledger_history_unsummed_subscriptions"] == "0" }
            // The subscription is in the sums: a state row of every product and of its own.
            let products = try await ledger.pool.withConnection {
                try $0.query("SELECT DISTINCT product_id FROM history_contributions WHERE granularity = 'state' ORDER BY 1").map { try $0.decode(0, as: String.self) }
            }
            #expect(products == ["", "com.example.pro.monthly"])
        }
    }

    @Test("a database that does not answer reads as ledger_database_up 0 alone")
    func databaseDown() async throws {
        let pool = ConnectionPool(conninfo: "host=/nonexistent-purchase-ledger dbname=none connect_timeout=2", maxConnections: 1, logger: Logger(label: "test"))
        let text = await DatabaseMetrics.scrape(pool, grace: .seconds(120))
        await pool.close()
        #expect(text == "# HELP ledger_database_up Whether PostgreSQL answered this scrape's queries: 1 yes, 0 no.\n# TYPE ledger_database_up gauge\nledger_database_up 0\n")
    }

    @Test("each family is one HELP, one TYPE gauge and one sample; the standbys only when visible")
    func text() {
        var status = DatabaseMetrics.Status(
            verifiedPosition: 40, unverifiedEvents: 2, chainBroken: true, undecidedPastGrace: 3, oldestPendingMs: 61_500, synchronousStandbys: nil,
            historyUnsummed: 7)
        let lines = DatabaseMetrics.text(status).split(separator: "\n").map(String.init)
        for (name, value) in [
            ("ledger_database_up", "1"), ("ledger_chain_verified_position", "40"), ("ledger_chain_unverified_events", "2"),
            ("ledger_chain_broken", "1"), ("ledger_undecided_submissions_past_grace", "3"), ("ledger_pending_receipts_oldest_seconds", "61.5"),
            ("ledger_history_unsummed_subscriptions", "7"),
        ] {
            #expect(lines.filter { $0.hasPrefix("# HELP \(name) ") }.count == 1, "\(name)")
            #expect(lines.filter { $0 == "# TYPE \(name) gauge" }.count == 1, "\(name)")
            #expect(lines.filter { $0.hasPrefix("\(name) ") } == ["\(name) \(value)"], "\(name)")
        }
        #expect(!lines.contains { $0.contains("ledger_database_synchronous_standbys") })
        status.synchronousStandbys = 1
        #expect(DatabaseMetrics.text(status).contains("\n# TYPE ledger_database_synchronous_standbys gauge\nledger_database_synchronous_standbys 1\n"))
    }

    @Test("every metric the alerting rules read is in a live scrape")
    func rulesReadLiveMetrics() async throws {
        let rules = try String(contentsOf: Self.rules, encoding: .utf8)
        // ledger_app is the role a description names, not a metric.
        let named = Set(Self.matches(#"(?<![A-Za-z0-9_])(ledger_[a-z0-9_]+)"#, in: rules)).subtracting(["ledger_app"])
        #expect(named.count >= 10, "\(named)")
        try await LoopbackPort.refusing { port in
            // An endpoint that refuses connections: its backlog, oldest message and last error show.
            let url = try #require(URL(string: "http://127.0.0.1:\(port)/hook"))
            try await LedgerHarness.with(webhooks: [WebhookEndpoint(name: "refusing", url: url)]) { ledger in
                let (_, purchase) = try await ledger.orderAndBuy(user: "m-live", product: "com.example.coins100", appleId: "apple-m-live")
                #expect(try await ledger.submit(user: "m-live", purchase: purchase).status == 200)
                let visible = try await ledger.pool.withConnection {
                    try $0.query("SELECT pg_has_role('ledger_app', 'pg_read_all_stats', 'USAGE')")[0].decode(0, as: Bool.self)
                }
                let expected = visible ? named : named.subtracting(["ledger_database_synchronous_standbys"])
                try await ledger.eventually("every metric the rules read is scraped") {
                    expected.isSubset(of: Self.names(try await Self.scrape(ledger)))
                }
            }
        }
    }

    static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
