import AppStore
import AppStoreClient
import AppleSimulator
import AsyncHTTPClient
import EventStore
import Crypto
import Foundation
import Ledger
import LedgerHTTP
import LedgerService
import LedgerStore
import LedgerWebhooks
import Logging
import NIOCore
import NIOHTTP1
import Postgres
import Primitives
import Synchronization
import TestSupport
import Testing
import X509

/// A ledger server on a free loopback port, on a fresh schema of the test PostgreSQL, with the
/// Apple simulator answering verifyReceipt over real HTTP: the whole product, nothing mocked.
struct LedgerHarness: Sendable {
    static let appToken = "app-token-0123456789"
    static let financeToken = "finance-token-0123456789"
    static let supportToken = "support-token-0123456789"
    static let bundleId = "com.example.app"
    static let catalog = """
        {"products": [
          {"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD"},
          {"product_id": "com.example.removeads", "kind": "non_consumable", "price_minor": 299, "currency": "USD"},
          {"product_id": "com.example.pro.monthly", "kind": "auto_renewable", "price_minor": 499, "currency": "USD"},
          {"product_id": "com.example.pro.yearly", "kind": "auto_renewable", "price_minor": 4999, "currency": "USD"},
          {"product_id": "com.example.pro.committed", "kind": "auto_renewable", "price_minor": 499, "currency": "USD"}
        ]}
        """

    let apple: RunningAppleSimulator
    /// The server running now: `restart()` (a restore's) replaces it.
    var server: RunningLedgerServer { running.value.withLock { $0 } }
    let running: ServerSlot
    /// What the server was started with, for `restart()`.
    let configuration: ServerConfiguration
    let logger: Logger
    let conninfo: String
    let pool: ConnectionPool
    /// The App Store Server API key the ledger signs with (`askApple`), to check it never leaks.
    var serverAPIKeyPEM: String? = nil
    /// The App Store Connect API key and URL the ledger reads price points with (`askConnect`).
    var appStoreConnect: AppStoreConnectConfiguration? = nil

    var simulator: AppleSimulator { apple.simulator }
    var base: String { server.baseURL }

    /// Runs `body` with a fresh ledger and simulator; stops both afterwards. The ledger lives in
    /// a fresh schema of the test cluster, or in `database` (a conninfo) when given; its server
    /// and migration log through `logger` (default: warnings only). The Apple time-out is long
    /// by default: a test that expects a 200 must not get a 202 because a loaded CI machine took
    /// more than a second or two to answer; tests of time-outs pass their own short one. Reads
    /// wait for the projections just as long, for the same reason. The ledger's clock follows the
    /// simulator's unless `clock` is given, which then serves as the machine's clock too (every
    /// reading fixed); the simulator's starts at `appleStart` when given, else now.
    static func with<T>(
        policy: TransferPolicy = .keep, sharedSecret: String? = nil, retry: RetryPolicy = RetryPolicy(base: .milliseconds(50), maximum: .milliseconds(400), clientRetryAfterSeconds: 1),
        timeout: Duration = .seconds(20), readYourWritesTimeout: Duration = .seconds(30), verifyReceiptURL: String? = nil, database: String? = nil, logger: Logger? = nil,
        askApple: Bool = false, refundPreference: String? = nil, secureCookies: Bool = false, readDatabase: String? = nil,
        clock: WallClock? = nil, appleStart: Date? = nil, machineFollowsSimulator: Bool = false, transactionInfoInterval: Duration? = nil,
        askConnect: Bool = false, pricePointInterval: Duration? = nil, taxChanges: [TaxChange] = [],
        webhooks: [WebhookEndpoint] = [], webhookSecret: String = LedgerHarness.webhookSecret,
        webhookDelivery: WebhookDeliverer.Settings = WebhookDeliverer.Settings(), finishTransactions: Bool = false,
        digests: DigestPublisher.Settings? = nil, apps: LedgerApps? = nil, extraTokens: String = "", erasureJournal: String? = nil,
        _ body: (LedgerHarness) async throws -> T
    ) async throws -> T {
        let logger = logger ?? {
            var logger = Logger(label: "tests.ledger")
            logger.logLevel = .warning
            return logger
        }()
        let settings = Settings(
            policy: policy, sharedSecret: sharedSecret, retry: retry, timeout: timeout, readYourWritesTimeout: readYourWritesTimeout,
            verifyReceiptURL: verifyReceiptURL, logger: logger, askApple: askApple, refundPreference: refundPreference,
            secureCookies: secureCookies, readDatabase: readDatabase, clock: clock, appleStart: appleStart,
            machineFollowsSimulator: machineFollowsSimulator, transactionInfoInterval: transactionInfoInterval, askConnect: askConnect,
            pricePointInterval: pricePointInterval, taxChanges: taxChanges, webhooks: webhooks, webhookSecret: webhookSecret,
            webhookDelivery: webhookDelivery, finishTransactions: finishTransactions, digests: digests, apps: apps, extraTokens: extraTokens,
            erasureJournal: erasureJournal)
        guard let database else {
            return try await TestDatabase.withSchema { conninfo, pool in try await run(settings, conninfo: conninfo, pool: pool, body) }
        }
        let pool = ConnectionPool(conninfo: database, maxConnections: 4, logger: TestDatabase.logger)
        let result: Result<T, any Error>
        do {
            result = .success(try await run(settings, conninfo: database, pool: pool, body))
        } catch {
            result = .failure(error)
        }
        await pool.close()
        return try result.get()
    }

    /// Runs `body` with a fresh, migrated schema and no server: for tests that write projection
    /// rows themselves, which a server's projection runner would race (it empties the tables
    /// of a projection it starts from the first event).
    static func withMigratedSchema<T>(_ body: (ConnectionPool) async throws -> T) async throws -> T {
        try await TestDatabase.withSchema { _, pool in
            try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            return try await body(pool)
        }
    }

    private struct Settings {
        var policy: TransferPolicy
        var sharedSecret: String?
        var retry: RetryPolicy
        var timeout: Duration
        var readYourWritesTimeout: Duration
        var verifyReceiptURL: String?
        var logger: Logger
        /// The ledger gets App Store Server API credentials whose public key the simulator
        /// checks every JWT against: a key pair made for this test.
        var askApple: Bool
        var refundPreference: String?
        /// The console's cookies with `Secure` (as in production); off by default, since the
        /// tests' browser talks plain HTTP.
        var secureCookies: Bool
        /// Standbys for reads (`DATABASE_READ_URL`), for the high-availability tests.
        var readDatabase: String?
        /// Every clock of the ledger, fixed; nil: the ledger's follows the simulator's, and
        /// retries and Server API tokens run on the machine's.
        var clock: WallClock?
        /// Where the simulator's clock starts; nil: now.
        var appleStart: Date?
        /// The machine's clock (retries, Server API tokens, console sessions and sign-in
        /// limits) follows the simulator's too, for tests that move time past a console limit.
        var machineFollowsSimulator: Bool = false
        /// How often the server asks Get Transaction Info about sales seen only in receipts
        /// (with `askApple`); nil: never, so tests that count Apple's calls count only theirs.
        var transactionInfoInterval: Duration? = nil
        /// The ledger gets an App Store Connect API key (price points) whose public key the
        /// simulator checks every JWT against: another key pair made for this test.
        var askConnect: Bool = false
        /// How often `serve` refreshes price points (with `askConnect`); nil: never, so tests
        /// refresh when they mean to.
        var pricePointInterval: Duration? = nil
        /// VAT/GST changes the simulated App Store Connect applies on their dates.
        var taxChanges: [TaxChange] = []
        /// Webhook endpoints (`LEDGER_WEBHOOKS`), signed with `webhookSecret`.
        var webhooks: [WebhookEndpoint] = []
        var webhookSecret: String = LedgerHarness.webhookSecret
        var webhookDelivery = WebhookDeliverer.Settings()
        /// `LEDGER_FINISH_TRANSACTIONS=1` (with `askApple`), passes 50 ms apart.
        var finishTransactions = false
        /// `LEDGER_DIGEST_INTERVAL`/`LEDGER_DIGEST_FILE`; nil: no digests published.
        var digests: DigestPublisher.Settings? = nil
        var apps: LedgerApps? = nil
        /// More `LEDGER_API_TOKENS` items (tokens limited to an app), after the three above.
        var extraTokens = ""
        /// `LEDGER_ERASURE_JOURNAL`.
        var erasureJournal: String? = nil
    }

    /// The tests' `LEDGER_WEBHOOK_SECRET`: 32 bytes.
    static let webhookSecret = "whsec_" + Data((0..<32).map { UInt8($0) }).base64EncodedString()

    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyId = "TESTKEY123"
    static let connectIssuerId = "69a6de7e-1a2b-47e3-e053-5b8c7c11a4d1"
    static let connectKeyId = "ASCKEY0001"

    private static func run<T>(_ settings: Settings, conninfo: String, pool: ConnectionPool, _ body: (LedgerHarness) async throws -> T) async throws -> T {
        try await Migrator.ledger().migrate(pool: pool, logger: settings.logger)
        var simulatorConfiguration = AppleSimulator.Configuration(machineClock: .system)
        simulatorConfiguration.sharedSecret = settings.sharedSecret
        if let start = settings.appleStart { simulatorConfiguration.start = start }
        simulatorConfiguration.taxChanges = settings.taxChanges
        let privateKeyPEM = P256.Signing.PrivateKey().pemRepresentation
        if settings.askApple {
            simulatorConfiguration.serverAPI = try ServerAPIAuthentication(
                privateKeyPEM: privateKeyPEM, issuerId: issuerId, keyId: keyId, bundleId: bundleId)
            // The key is the team's: it asks about every app the ledger serves.
            simulatorConfiguration.serverAPI?.otherBundleIds = Set(settings.apps?.bundleIds ?? []).subtracting([bundleId])
        }
        let connectKeyPEM = P256.Signing.PrivateKey().pemRepresentation
        if settings.askConnect {
            simulatorConfiguration.connectPublicKeyPEM = try P256.Signing.PrivateKey(pemRepresentation: connectKeyPEM).publicKey.pemRepresentation
            simulatorConfiguration.connectKeyId = connectKeyId
            simulatorConfiguration.connectIssuerId = connectIssuerId
        }
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: simulatorConfiguration)).start()
        let verifyURL = settings.verifyReceiptURL
        let simulator = apple.simulator
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, conninfo: conninfo, tokens: try APITokens(parsing: "\(appToken):app,\(financeToken):finance,\(supportToken):support,\(settings.extraTokens)"),
            ledger: LedgerConfiguration(
                bundleId: bundleId, sharedSecret: settings.sharedSecret, transferPolicy: settings.policy, retry: settings.retry,
                readYourWritesTimeout: settings.readYourWritesTimeout),
            verifyReceipt: VerifyReceiptConfiguration(
                productionURL: verifyURL ?? apple.productionURL, sandboxURL: verifyURL ?? apple.sandboxURL, sharedSecret: settings.sharedSecret,
                timeout: settings.timeout, malformedReceiptRetries: 1, malformedReceiptRetryDelay: .milliseconds(10)),
            rootCertificates: [try Certificate(derEncoded: apple.simulator.rootCertificateDER)],
            poolSize: 8, workerPollInterval: .milliseconds(20),
            clock: settings.clock ?? WallClock({ simulator.nowMilliseconds }), machineClock: settings.clock ?? (settings.machineFollowsSimulator ? WallClock({ simulator.nowMilliseconds }) : .system))
        // Several apps where a test asks: the harness's catalog is then the first app's.
        if let apps = settings.apps {
            configuration.ledger.apps = apps
            configuration.verifyReceipt.sharedSecret = apps.first.sharedSecret
        }
        // Tests reconcile when they mean to, not at start.
        configuration.ledger.reconcileInterval = nil
        configuration.ledger.transactionInfoInterval = settings.transactionInfoInterval
        configuration.ledger.refundPreference = settings.refundPreference
        configuration.consoleInsecureCookies = !settings.secureCookies
        configuration.readConninfo = settings.readDatabase
        if settings.askApple {
            configuration.serverAPI = ServerAPIConfiguration(
                issuerId: issuerId, keyId: keyId, privateKeyPEM: privateKeyPEM, bundleId: bundleId, baseURL: apple.baseURL,
                baseDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
        }
        configuration.ledger.pricePointInterval = settings.pricePointInterval
        configuration.ledger.finishTransactions = settings.finishTransactions
        configuration.ledger.erasureJournal = settings.erasureJournal.map(ErasureJournal.init(path:))
        configuration.ledger.finishInterval = .milliseconds(50)
        // Digests only where a test asks: a published one is a webhook message of its own.
        configuration.digests = settings.digests
        if !settings.webhooks.isEmpty {
            configuration.webhooks = (settings.webhooks, WebhookSigner(secrets: try WebhookSecrets(settings.webhookSecret)))
            configuration.webhookDelivery = settings.webhookDelivery
        }
        if settings.askConnect {
            // Small pages, so every refresh follows `links.next`.
            configuration.appStoreConnect = AppStoreConnectConfiguration(
                issuerId: connectIssuerId, keyId: connectKeyId, privateKeyPEM: connectKeyPEM, baseURL: apple.baseURL,
                baseDelay: .milliseconds(20), maximumDelay: .milliseconds(200), pageSize: 10)
        }
        let server: RunningLedgerServer
        do {
            server = try await LedgerServer(configuration: configuration, logger: settings.logger).start()
        } catch {
            try? await apple.stop()
            throw error
        }
        apple.simulator.notificationURL = server.baseURL + "/v1/notifications/apple"
        var harness = LedgerHarness(
            apple: apple, running: ServerSlot(server), configuration: configuration, logger: settings.logger, conninfo: conninfo, pool: pool)
        if settings.askApple { harness.serverAPIKeyPEM = privateKeyPEM }
        harness.appStoreConnect = configuration.appStoreConnect
        do {
            _ = try await server.service.loadCatalog(Data(catalog.utf8), metadata: RequestMetadata(actor: "test"))
            let result = try await body(harness)
            try await harness.server.stop()
            try await apple.stop()
            try await harness.expectPayloadsReadQuickly()
            return result
        } catch {
            try? await harness.server.stop()
            try? await apple.stop()
            throw error
        }
    }

    /// Stops the server, runs `whileStopped` (a restore), and starts another server with the same
    /// configuration, simulator and database, as an operator restarts `serve` after a restore:
    /// nothing of the old process's memory (the runner's position, caches) carries over. The
    /// catalog is in the database already.
    func restart(_ whileStopped: () async throws -> Void = {}) async throws {
        try await server.stop()
        try await whileStopped()
        let next = try await LedgerServer(configuration: configuration, logger: logger).start()
        running.value.withLock { $0 = next }
        apple.simulator.notificationURL = next.baseURL + "/v1/notifications/apple"
    }

    // MARK: - HTTP

    struct Answer: Sendable {
        var status: Int
        var json: [String: any Sendable]
        var headers: [(String, String)]

        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var errorCode: String? { (json["error"] as? [String: any Sendable])?["code"] as? String }
        var outcome: String? { json["outcome"] as? String }
        var deliveries: [[String: any Sendable]] { (json["deliveries"] as? [[String: any Sendable]]) ?? [] }
    }

    /// The harness's client. `HTTPClient.shared` fails a request that waited 10 s for one of its
    /// 8 connections to a host (`getConnectionFromPoolTimeout`): 64 racing spends of one wallet
    /// queue behind each other, and on a busy CI machine the last of them waited longer than that.
    /// Here a request waits for a connection as long as its own time-out allows, and still opens
    /// 8 at most: 64 at once would have the simulator answer 64 verifyReceipt calls at once,
    /// which a loaded machine answers past the ledger's time-out (202 pending). Never shut down:
    /// it lives as long as the test process, like the shared one.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(600)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// `timeout` counts from the call, so a request queued behind others (64 racing spends of one
    /// wallet take turns) spends its wait inside it.
    func request(
        _ method: HTTPMethod, _ path: String, body: String? = nil, token: String? = LedgerHarness.appToken, headers: [(String, String)] = [],
        timeout: Duration = .seconds(60)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await Self.http.execute(request, timeout: .init(timeout))
        let bytes = try await response.body.collect(upTo: 8 << 20)
        let data = Data(buffer: bytes)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: any Sendable] ?? [:]
        return Answer(status: Int(response.status.code), json: json, headers: response.headers.map { ($0.name, $0.value) })
    }

    func post(_ path: String, _ object: [String: Any], token: String? = LedgerHarness.appToken, timeout: Duration = .seconds(60)) async throws -> Answer {
        let data = try JSONSerialization.data(withJSONObject: object)
        return try await request(.POST, path, body: String(decoding: data, as: UTF8.self), token: token, timeout: timeout)
    }

    func get(_ path: String, token: String? = LedgerHarness.appToken) async throws -> Answer {
        try await request(.GET, path, token: token)
    }

    // MARK: - Purchases

    /// Creates an order, buys it on the simulated device with the order's token, and returns both.
    /// What the log records for a user id the API was given: its handle (docs/erasure.md). Tests
    /// that read events or read models straight, not through the API, compare with this.
    func recorded(_ user: String) async throws -> String {
        try #require(try await server.service.people.knownHandle(forUser: user), "no subject for \(user)")
    }

    func orderAndBuy(user: String, product: String, appleId: String, environment: String = "Production", useToken: Bool = true) async throws -> (order: [String: any Sendable], purchase: PurchaseResult) {
        let order = try await post("/v1/orders", ["user_id": user, "product_id": product])
        guard order.status == 201, let token = order.json["app_account_token"] as? String else {
            throw HarnessError("order failed: \(order.status) \(order.json)")
        }
        let purchase = try await simulator.purchase(
            appleId: appleId, productId: product, environment: environment == "Production" ? .production : .sandbox,
            appAccountToken: useToken ? UUID(uuidString: token) : nil)
        return (order.json, purchase)
    }

    func submit(user: String, purchase: PurchaseResult, withTransactionId: Bool = true, timeout: Duration = .seconds(60)) async throws -> Answer {
        var body: [String: Any] = ["user_id": user, "receipt_data": purchase.receiptData]
        if withTransactionId { body["transaction_id"] = purchase.transactionId }
        return try await post("/v1/receipts", body, timeout: timeout)
    }

    /// Events of a type in the log, decoded.
    func events(_ type: String) async throws -> [LedgerEvent] {
        try await pool.withConnection { connection in
            try connection.query("SELECT event_type, payload FROM events WHERE event_type = \(type) ORDER BY position").map {
                try LedgerEvent(type: $0.decode(0), payload: Data($0.decode(1, as: JSONB.self).bytes))
            }
        }
    }

    /// Every event this test recorded, read as rebuilds and timelines read it (the quick reader
    /// and PayloadValueDecoding), is the event JSONDecoder reads: payloads from every flow the
    /// suites drive, not only the examples.
    func expectPayloadsReadQuickly() async throws {
        let rows = try await pool.withConnection { connection in
            try connection.query("SELECT event_type, payload FROM events ORDER BY position").map {
                (try $0.decode(0, as: String.self), try $0.decode(1, as: JSONB.self).bytes)
            }
        }
        for (type, bytes) in rows {
            let decoderSays = try LedgerEvent.decodedByDecoder(type: type, payload: Data(bytes))
            let quick = JSONValue.parsedQuickly(bytes).flatMap { LedgerEvent.decodedQuickly(type: type, value: $0) }
            #expect(quick == decoderSays, "\(type) read quickly: \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    func count(_ type: String) async throws -> Int64 {
        try await pool.withConnection { try $0.query("SELECT count(*) FROM events WHERE event_type = \(type)")[0].decode(0) }
    }

    /// Waits, with a deadline, until `condition` holds; fails the test if it never does.
    func eventually(_ what: String, within: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws {
        try await waitUntil(what, within: within, condition)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The harness's server, which `restart()` replaces for every copy of the harness.
final class ServerSlot: Sendable {
    let value: Mutex<RunningLedgerServer>

    init(_ server: RunningLedgerServer) {
        value = Mutex(server)
    }
}
