import AppStore
import AppStoreClient
import AppleSimulator
import AsyncHTTPClient
import Crypto
import EventStore
import Foundation
import Ledger
import LedgerHTTP
import LedgerProjections
import LedgerQueries
import LedgerService
import LedgerStore
import Logging
import Postgres
import Primitives

/// `Tools/bench price`: Apple's price points read (from the simulator's App Store Connect API,
/// over HTTP, every page kept verbatim and recorded) and applied (the first refresh prices every
/// sale line of a log grown with six storefronts), and the revenue report's latency beside the
/// same report in the same run before any point was read: what pricing adds to a report.
enum PriceBench {
    static let finance = "bench-finance-token-0123"

    static func run(conninfo: String, requests: Int) async throws {
        var logger = Logger(label: "bench.price")
        logger.logLevel = .error
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 2, logger: logger)
        let store = EventStore(pool: pool, logger: logger)
        let runner = ProjectionRunner(store: store, conninfo: conninfo, pageSize: 2_000, logger: logger)
        try await runner.catchUp()
        let events = try await store.headPosition()
        let purchases = try await LedgerReads(pool: pool).eventCount(ofType: "OrderCreated")

        // Apple's clock starts just after the grown log's last purchase; the ledger's follows it,
        // so a refresh is dated after every sale and the first one prices them all.
        let key = P256.Signing.PrivateKey()
        var simulated = AppleSimulator.Configuration(machineClock: .system)
        simulated.start = Date(timeIntervalSince1970: Double(1_767_225_600 + purchases * 60))
        simulated.connectPublicKeyPEM = key.publicKey.pemRepresentation
        simulated.connectKeyId = "BENCHKEY01"
        simulated.connectIssuerId = "bench-issuer"
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: simulated)).start()
        let simulator = apple.simulator
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, conninfo: conninfo, tokens: try APITokens(parsing: "\(finance):finance"),
            ledger: LedgerConfiguration(bundleId: "com.example.app"),
            verifyReceipt: VerifyReceiptConfiguration(productionURL: "http://127.0.0.1:9/verifyReceipt", sandboxURL: "http://127.0.0.1:9/verifyReceipt"),
            rootCertificates: [], poolSize: 8, clock: WallClock({ simulator.nowMilliseconds }), machineClock: .system)
        configuration.ledger.reconcileInterval = nil
        configuration.ledger.pricePointInterval = nil
        configuration.appStoreConnect = AppStoreConnectConfiguration(
            issuerId: "bench-issuer", keyId: "BENCHKEY01", privateKeyPEM: key.pemRepresentation, baseURL: apple.baseURL)
        let server = try await LedgerServer(configuration: configuration, logger: logger).start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            // The catalog again, now with App Store Connect's ids, so its price points can be read.
            let products: [[String: Any]] = simulator.configuration.products.map {
                ["product_id": $0.productId, "kind": $0.kind.rawValue, "apple_id": $0.reportAppleIdentifier,
                 "price_minor": $0.priceMilliunits / 10, "currency": $0.currency]
            }
            _ = try await server.service.loadCatalog(
                try JSONSerialization.data(withJSONObject: ["products": products]), metadata: RequestMetadata(actor: "bench"))
            let last = RevenueDay.of(simulator.nowMilliseconds)
            let probes = ["day", "product", "country"].map { ($0, "/v1/reports/revenue?from=2026-01-01&to=\(last)&group_by=\($0)") }
            let lines: Int64 = try await pool.withConnection { try $0.query("SELECT count(*) FROM projection_revenue_lines")[0].decode(0) }
            print("price points at \(events) events (\(purchases) purchases, \(lines) revenue lines in six storefronts), \(requests) sequential requests per report after 3 warm-up")

            var before: [(Double, Double)] = []
            for (_, path) in probes { before.append(try await ConsoleBench.measure(client, server.baseURL + path, bearer: finance, requests: requests)) }

            let connect = try await AppStoreConnectClient(configuration: try configuration.appStoreConnect.orThrow(), clock: .system, logger: logger)
            for round in 1...2 {
                let started = ContinuousClock.now
                let summaries = try await server.service.refreshPricePoints(using: connect, metadata: RequestMetadata(actor: "bench"))
                let read = (ContinuousClock.now - started).seconds
                let points = summaries.reduce(0) { sum, summary in
                    if case .refreshed(let event) = summary.outcome { sum + event.points.count } else { sum }
                }
                // The report waits for the projections to apply the refresh: its latency is the apply.
                let applyStarted = ContinuousClock.now
                _ = try await server.reads.revenue(try RevenueQuery(from: "2026-01-01", to: last, groupBy: .country))
                let applied = (ContinuousClock.now - applyStarted).seconds
                let priced: Int64 = try await pool.withConnection {
                    try $0.query("SELECT count(*) FROM projection_revenue_lines WHERE point_proceeds_minor IS NOT NULL")[0].decode(0)
                }
                print(String(format: "refresh %d: %d points of %d products read and recorded in %.3f s (%.0f points/s); applied in %.3f s (%d of %d lines priced%@)",
                             round, points, summaries.count, read, Double(points) / read, applied, priced, lines,
                             round == 1 ? String(format: ", %.0f lines/s", Double(priced) / applied) : ": the lines a later refresh can change, none here"))
                _ = try await simulator.advance(days: 1)
            }

            print("report".padding(toLength: 30, withPad: " ", startingAt: 0) + "   estimated p50 ms   p99 ms  |  priced p50 ms   p99 ms")
            for (index, (name, path)) in probes.enumerated() {
                let after = try await ConsoleBench.measure(client, server.baseURL + path, bearer: finance, requests: requests)
                print("revenue by \(name)".padding(toLength: 30, withPad: " ", startingAt: 0)
                      + String(format: "   %16.1f %8.1f  |  %13.1f %8.1f", before[index].0, before[index].1, after.0, after.1))
            }
            let estimated = try await server.reads.estimatedSales(try RevenueQuery(from: "2026-01-01", to: last))
            print("sales still estimated after the refreshes: \(estimated.count)")
        } catch {
            try? await client.shutdown()
            try? await server.stop()
            try? await apple.stop()
            await pool.close()
            throw error
        }
        try await client.shutdown()
        try await server.stop()
        try await apple.stop()
        await pool.close()
    }
}

extension Optional {
    /// The value, or a bench error naming what was missing.
    func orThrow(_ what: String = "a value") throws -> Wrapped {
        guard let self else { throw BenchError("\(what) is missing") }
        return self
    }
}
