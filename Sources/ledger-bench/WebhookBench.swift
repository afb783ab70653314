import AppStoreClient
import AsyncHTTPClient
import EventStore
import Foundation
import LedgerHTTP
import LedgerProjections
import LedgerService
import LedgerStore
import LedgerWebhooks
import Logging
import NIOCore
import Postgres

/// `Tools/bench webhooks`: the messages of a grown log delivered to a receiver on loopback (a
/// backlog drained: messages per second, each signed, each acknowledged), then the lag from an
/// event's commit to its 2xx under a steady stream of spends from 8 clients (p50, p99), beside
/// the rate at which `GET /v1/events` reads the same messages.
enum WebhookBench {
    static let token = "bench-app-token-0123456789"

    static func run(conninfo: String, spends: Int) async throws {
        var logger = Logger(label: "bench.webhooks")
        logger.logLevel = .error
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 4, logger: logger)
        let runner = ProjectionRunner(store: EventStore(pool: pool, logger: logger), conninfo: conninfo, pageSize: 2_000, logger: logger)
        try await runner.catchUp(verifyingChain: false)
        let events = try await EventStore(pool: pool, logger: logger).headPosition()
        let messages: Int64 = try await pool.withConnection {
            try $0.query("SELECT count(*) FROM projection_webhook_events")[0].decode(0)
        }
        print("log: \(events) events, \(messages) webhook messages")

        let signer = WebhookSigner(secrets: try WebhookSecrets(WebhookSecrets.generate()))
        let receiver = WebhookReceiver(signer: signer, clock: .system, logger: logger)
        try await receiver.start()
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, conninfo: conninfo, tokens: try APITokens(parsing: "\(token):app"),
            ledger: LedgerConfiguration(bundleId: "com.example.app"),
            verifyReceipt: VerifyReceiptConfiguration(productionURL: "http://127.0.0.1:9/verifyReceipt", sandboxURL: "http://127.0.0.1:9/verifyReceipt"),
            rootCertificates: [], poolSize: 8, clock: .system, machineClock: .system)
        configuration.ledger.reconcileInterval = nil
        configuration.ledger.pricePointInterval = nil
        configuration.webhooks = ([WebhookEndpoint(name: "bench", url: receiver.url)], signer)
        let started = ContinuousClock.now
        let server = try await LedgerServer(configuration: configuration, logger: logger).start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            // 1. The backlog: every message of the log, from the first.
            try await waitForBacklog(pool: pool, within: .seconds(3_600))
            let drained = ContinuousClock.now - started
            let acknowledged = receiver.acknowledged.count
            print(String(format: "backlog drained: %d messages in %.2f s = %.0f messages/s delivered (signed, each acknowledged; one endpoint, 16 users at once)",
                         acknowledged, drained.seconds, Double(acknowledged) / drained.seconds))

            // 2. Lag: spends from 8 clients, each told as balance.changed; commit (recorded_at)
            // to the receiver's 2xx.
            let users: [String] = try await pool.withConnection { connection in
                try connection.query("SELECT user_id FROM projection_app_balances WHERE unit = 'coins' AND amount >= 100 ORDER BY user_id LIMIT 64").map { try $0.decode(0) }
            }
            let before = receiver.arrivals.count
            let perClient = max(1, spends / 8)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for c in 0..<8 {
                    group.addTask {
                        for i in 0..<perClient {
                            let user = users[(c * perClient + i) % users.count]
                            var request = HTTPClientRequest(url: "\(server.baseURL)/v1/users/\(user)/spend")
                            request.method = .POST
                            request.headers.add(name: "authorization", value: "Bearer \(token)")
                            request.headers.add(name: "content-type", value: "application/json")
                            request.body = .bytes(ByteBuffer(string: #"{"unit":"coins","amount":1,"spend_id":"bench-\#(c)-\#(i)-\#(UUID().uuidString)"}"#))
                            let response = try await client.execute(request, timeout: .seconds(30))
                            _ = try await response.body.collect(upTo: 1 << 16)
                            // A steady stream, not a burst: about 25 spends a second per client.
                            try await Task.sleep(for: .milliseconds(40))
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await waitForBacklog(pool: pool, within: .seconds(120))
            let fresh = Array(receiver.arrivals[before...]).filter { (200..<300).contains($0.status) }
            let positions = fresh.compactMap { $0.data["position"] as? Int }.map(Int64.init)
            let committed = try await pool.withConnection { try LedgerReads.recordedAtMs(of: positions, on: $0) }
            let lags = fresh.compactMap { arrival -> Double? in
                guard let position = arrival.data["position"] as? Int, let at = committed[Int64(position)], let received = arrival.receivedAtMs else { return nil }
                return Double(received - at)
            }.sorted()
            func percentile(_ p: Double) -> Double { lags.isEmpty ? .nan : lags[min(lags.count - 1, Int(Double(lags.count) * p))] }
            print(String(format: "lag from commit to 2xx over %d spends (8 clients, each pausing 40 ms between spends): p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                         lags.count, percentile(0.50), percentile(0.99), lags.last ?? .nan))

            // 3. The feed reading the same messages: pages of 1000 from the first.
            let feedStart = ContinuousClock.now
            var after: Int64 = 0
            var read = 0
            while true {
                var request = HTTPClientRequest(url: "\(server.baseURL)/v1/events?after=\(after)&limit=1000")
                request.headers.add(name: "authorization", value: "Bearer \(token)")
                let response = try await client.execute(request, timeout: .seconds(60))
                let body = try await response.body.collect(upTo: 64 << 20)
                let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
                let page = (json["events"] as? [Any])?.count ?? 0
                if page == 0 { break }
                read += page
                after = Int64(json["next"] as? Int ?? 0)
            }
            let feed = ContinuousClock.now - feedStart
            print(String(format: "GET /v1/events: %d messages in %.2f s = %.0f messages/s (pages of 1000)", read, feed.seconds, Double(read) / feed.seconds))
            print("every signature valid: \(receiver.arrivals.allSatisfy { $0.signatureValid })")
        } catch {
            try? await client.shutdown()
            try? await server.stop()
            await receiver.stop()
            await pool.close()
            throw error
        }
        try await client.shutdown()
        try await server.stop()
        await receiver.stop()
        await pool.close()
    }

    static func waitForBacklog(pool: ConnectionPool, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let statuses = try await pool.withConnection { try WebhookStatus.endpoints(on: $0) }
            if let status = statuses.first, status.backlog == 0, status.position > 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError("the webhook backlog was not drained within \(limit)")
    }
}
