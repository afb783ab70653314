import AppStore
import AppStoreClient
import AppleSimulator
import AsyncHTTPClient
import Crypto
import EventStore
import Foundation
import LedgerHTTP
import LedgerService
import LedgerStore
import LedgerWorkers
import Logging
import NIOCore
import Postgres
import Primitives
import X509

/// `Tools/bench reconcile`: the rate at which one reconciliation records notifications the
/// ledger missed, from Get Notification History pages over loopback HTTP, beside the rate of
/// recording the very same notifications posted to `POST /v1/notifications/apple` (one client,
/// as reconciliation records one at a time, and eight). Each in a schema of its own, durable.
/// Returns "RECOVERED_PER_S POSTED_1_PER_S POSTED_8_PER_S NOTIFICATIONS".
enum ReconcileBench {
    static func run(conninfo: String, notifications count: Int) async throws -> String {
        var logger = Logger(label: "bench.reconcile")
        logger.logLevel = .error
        let key = P256.Signing.PrivateKey().pemRepresentation
        var configuration = AppleSimulator.Configuration(machineClock: .system)
        configuration.serverAPI = try ServerAPIAuthentication(privateKeyPEM: key, issuerId: "bench-issuer", keyId: "BENCHKEY01", bundleId: "com.example.app")
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: configuration), logger: logger).start()
        // No notification URL: every notification is made and never delivered, as in an outage.
        for index in 0..<count {
            _ = try await apple.simulator.purchase(appleId: "apple-\(index)", productId: "com.example.coins100", environment: .production)
        }
        let notifications = apple.simulator.sentNotifications.filter { $0.version == .v2 }.map(\.body)

        func ledger() async throws -> (RunningLedgerServer, ConnectionPool) {
            let (schemaConninfo, pool) = try await migratedSchema("reconcile", conninfo: conninfo, logger: logger)
            var server = ServerConfiguration(
                host: "127.0.0.1", port: 0, conninfo: schemaConninfo, tokens: try APITokens(parsing: "\(FlowBench.token):app"),
                ledger: LedgerConfiguration(bundleId: "com.example.app"),
                verifyReceipt: VerifyReceiptConfiguration(productionURL: apple.productionURL, sandboxURL: apple.sandboxURL),
                rootCertificates: [try Certificate(derEncoded: apple.simulator.rootCertificateDER)], poolSize: 16,
                clock: WallClock({ [simulator = apple.simulator] in simulator.nowMilliseconds + 1 }), machineClock: .system)
            server.ledger.reconcileInterval = nil
            server.serverAPI = ServerAPIConfiguration(
                issuerId: "bench-issuer", keyId: "BENCHKEY01", privateKeyPEM: key, bundleId: "com.example.app", baseURL: apple.baseURL)
            return (try await LedgerServer(configuration: server, logger: logger).start(), pool)
        }
        func recorded(_ pool: ConnectionPool) async throws -> Int64 {
            try await LedgerReads(pool: pool).eventCount(ofType: "AppleNotificationReceived")
        }

        // Recovered by one reconciliation.
        let (reconciling, reconcilingPool) = try await ledger()
        let clock = ContinuousClock()
        var began = clock.now
        _ = try await Reconciler(service: reconciling.service, clients: try reconciling.service.requireServerAPIClients(), logger: logger)
            .run(environments: [.production])
        let recovered = Double(try await recorded(reconcilingPool)) / (clock.now - began).seconds
        try await reconciling.stop()
        await reconcilingPool.close()

        // The same bodies posted, by one client and by eight.
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var posted: [Double] = []
        for clients in [1, 8] {
            let (server, pool) = try await ledger()
            began = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<clients {
                    group.addTask {
                        for body in stride(from: lane, to: notifications.count, by: clients).map({ notifications[$0] }) {
                            var request = HTTPClientRequest(url: server.baseURL + "/v1/notifications/apple")
                            request.method = .POST
                            request.headers.add(name: "Content-Type", value: "application/json")
                            request.body = .bytes(ByteBuffer(string: body))
                            let response = try await client.execute(request, timeout: .seconds(30))
                            _ = try await response.body.collect(upTo: 1 << 20)
                            guard response.status == .ok else { throw BenchError("a notification was answered \(response.status.code)") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            posted.append(Double(try await recorded(pool)) / (clock.now - began).seconds)
            try await server.stop()
            await pool.close()
        }
        try await client.shutdown()
        try await apple.stop()
        return String(format: "%.0f %.0f %.0f %d", recovered, posted[0], posted[1], notifications.count)
    }
}
