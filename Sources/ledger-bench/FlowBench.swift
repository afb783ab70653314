import AppleSimulator
import AppStore
import AppStoreClient
import AsyncHTTPClient
import EventStore
import Foundation
@_spi(Bench) import LedgerHTTP
import LedgerService
import LedgerStore
import Logging
import NIOCore
import NIOHTTP1
import Postgres
import X509

/// `Tools/bench flow`: `POST /v1/receipts` through the real HTTP server from `clients`
/// concurrent clients, the simulator answering verifyReceipt at once over loopback HTTP, and
/// PostgreSQL durable. Every purchase is ordered and bought before the clock starts, so only the
/// receipts are timed. With `BENCH_APPS` above 1 the ledger serves that many apps and the
/// purchases go to each in turn (`ReplayBench.apps`). With `BENCH_FLOW_WRITES_ONLY=1` the server
/// applies no projection: what a receipt costs on its write path alone (the two durable appends,
/// the decision's look-ups, Apple's answer), the part the runner does not share. With
/// `BENCH_SEALED=0` the log is one an earlier release began, so ids are recorded as they are:
/// sealing's own cost, on one build. Returns "RATE P50_MS P99_MS DELIVERED
/// PROCESS_CPU_MS POSTGRES_CPU_MS", the last two per receipt.
enum FlowBench {
    static let catalog = #"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD"}]}"#
    static let token = "bench-app-token"

    static func run(conninfo: String, clients: Int, seconds: Double) async throws -> String {
        var logger = Logger(label: "bench.flow")
        logger.logLevel = .error
        // A schema of this round's own: the simulator's ids start afresh in every process. With
        // `BENCH_FLOW_IN_PLACE=1`, the schema `conninfo` names, a log `replay-grow` made (its
        // transaction ids are far from the simulator's; `Tools/bench apps`).
        let (schemaConninfo, pool): (String, ConnectionPool)
        if ProcessInfo.processInfo.environment["BENCH_FLOW_IN_PLACE"] == "1" {
            (schemaConninfo, pool) = (conninfo, ConnectionPool(conninfo: conninfo, maxConnections: 2, logger: logger))
        } else {
            (schemaConninfo, pool) = try await migratedSchema("flow", conninfo: conninfo, logger: logger)
        }
        // `BENCH_SEALED=0`: a log an earlier release began, on which this build records ids as
        // they are until `erasure begin` (docs/erasure.md): sealing's own cost, on one build.
        if !BenchPeople.sealed, try await EventStore(pool: pool, logger: logger).headPosition() == 0 {
            let log = LedgerLog(store: EventStore(pool: pool, logger: logger))
            _ = try await CatalogStore().load(Data(catalog.utf8), bundleId: ReplayBench.apps[0], into: log, metadata: RequestMetadata(actor: "bench"))
        }
        let deliveredBefore = try await LedgerReads(pool: pool).eventCount(ofType: "PurchaseDelivered")

        // A round on a log earlier rounds grew hands out ids past theirs: each purchase they
        // bought took one, and each was ordered first (delivered or not), as each grown one was.
        let ordersBefore = try await LedgerReads(pool: pool).eventCount(ofType: "OrderCreated")
        let (apple, server) = try await startServers(
            conninfo: schemaConninfo, apps: ReplayBench.apps, idOffset: ordersBefore,
            runsProjections: ProcessInfo.processInfo.environment["BENCH_FLOW_WRITES_ONLY"] != "1", logger: logger)

        // Enough purchases for the round, bought up front (orders through the service, as the
        // app's backend would have created them before the client paid).
        let count = Int((seconds + 1) * 1_500)
        let purchases = try await prepare(count: count, server: server, simulator: apple.simulator)

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let figures: ClosedLoop.Figures
        do {
            figures = try await ClosedLoop.run(clients: clients, seconds: seconds, items: purchases) { purchase in
                try await submit(purchase, to: server.baseURL, client: client)
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        let delivered = try await LedgerReads(pool: pool).eventCount(ofType: "PurchaseDelivered") - deliveredBefore
        try await server.stop()
        try await apple.stop()
        await pool.close()

        return String(
            format: "%.0f %.2f %.2f %d %.2f %.2f", figures.rate, figures.p50, figures.p99, delivered, figures.processCPU, figures.postgresCPU)
    }

    static func prepare(count: Int, server: RunningLedgerServer, simulator: AppleSimulator) async throws -> [(user: String, receipt: String, transaction: String)] {
        try await withThrowingTaskGroup(of: [(String, String, String)].self) { group in
            let workers = 8
            for worker in 0..<workers {
                group.addTask {
                    var made: [(String, String, String)] = []
                    let apps = server.service.configuration.apps.bundleIds
                    for index in stride(from: worker, to: count, by: workers) {
                        let user = "user-\(index)"
                        let app = apps[index % apps.count]
                        // As the API records it (docs/erasure.md), so the receipts take the path
                        // of a person sealed from the start; the token the app is given opened,
                        // as the API's answer opens it.
                        let order = try await server.service.createOrder(
                            userId: try await server.service.people.handle(forUser: user), productId: "com.example.coins100", quantity: 1, bundleId: app, metadata: RequestMetadata(actor: "bench"))
                        let purchase = try await simulator.purchase(
                            appleId: "apple-\(index)", productId: "com.example.coins100", environment: .production,
                            appAccountToken: UUID(uuidString: try await server.service.people.plaintext(of: order.appAccountToken) ?? ""), bundleId: app)
                        made.append((user, purchase.receiptData, purchase.transactionId))
                    }
                    return made
                }
            }
            var all: [(user: String, receipt: String, transaction: String)] = []
            for try await some in group { all += some.map { (user: $0.0, receipt: $0.1, transaction: $0.2) } }
            return all
        }
    }

    /// The simulator and a ledger server on `conninfo` serving `apps`, each with the bench's
    /// catalog loaded: the setup of the flow and failover benches.
    static func startServers(
        conninfo: String, apps: [String] = ["com.example.app"], idOffset: Int64 = 0, runsProjections: Bool = true, logger: Logger
    ) async throws -> (RunningAppleSimulator, RunningLedgerServer) {
        var simulated = AppleSimulator.Configuration(machineClock: .system)
        simulated.idOffset = idOffset
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: simulated), logger: logger).start()
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, conninfo: conninfo, tokens: try APITokens(parsing: "\(token):app"),
            ledger: LedgerConfiguration(apps: try LedgerApps(apps.map { AppSettings(bundleId: $0) })),
            verifyReceipt: VerifyReceiptConfiguration(productionURL: apple.productionURL, sandboxURL: apple.sandboxURL),
            rootCertificates: [try Certificate(derEncoded: apple.simulator.rootCertificateDER)], poolSize: 16, clock: .system,
            machineClock: .system)
        configuration.runsProjections = runsProjections
        let server = try await LedgerServer(configuration: configuration, logger: logger).start()
        for app in apps {
            _ = try await server.service.loadCatalog(Data(catalog.utf8), bundleId: app, metadata: RequestMetadata(actor: "bench"))
        }
        return (apple, server)
    }

    /// Submits one receipt; returns the answer's `X-Ledger-Position`.
    @discardableResult
    static func submit(_ purchase: (user: String, receipt: String, transaction: String), to base: String, client: HTTPClient) async throws -> String? {
        var request = HTTPClientRequest(url: base + "/v1/receipts")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = try JSONSerialization.data(withJSONObject: [
            "user_id": purchase.user, "receipt_data": purchase.receipt, "transaction_id": purchase.transaction,
        ])
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let answer = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else {
            throw BenchError("a receipt was answered \(response.status.code): \(String(buffer: answer))")
        }
        return response.headers.first(name: "X-Ledger-Position")
    }
}

/// A new schema named `prefix_…`, migrated: its conninfo and a pool on it.
func migratedSchema(_ prefix: String, conninfo: String, logger: Logger) async throws -> (conninfo: String, pool: ConnectionPool) {
    let schema = prefix + "_" + UUID().uuidString.prefix(8).lowercased()
    let admin = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: logger)
    try await admin.withConnection { try $0.execute("CREATE SCHEMA \(identifier: schema)") }
    await admin.close()
    let schemaConninfo = try Conninfo.addingOptions("-c search_path=\(schema)", to: conninfo)
    let pool = ConnectionPool(conninfo: schemaConninfo, maxConnections: 2, logger: logger)
    try await Migrator.ledger().migrate(pool: pool, logger: logger)
    return (schemaConninfo, pool)
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
