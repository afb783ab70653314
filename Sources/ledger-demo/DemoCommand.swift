import AppStore
import AppStoreClient
import AppleSimulator
import ArgumentParser
import Crypto
import EventStore
import Foundation
import LedgerHTTP
import LedgerQueries
import LedgerService
import LedgerStore
import LedgerWorkers
import Logging
import Primitives
import PurchaseLedgerCLI
import Postgres

/// The newcomer's first run (`Tools/demo`): the ledger's HTTP server and the Apple simulator, a
/// few purchases of each kind played through the API as an app's backend would, then balances,
/// subscriptions and the chain verification. `--serve` keeps both up to explore. A development
/// executable of its own, beside `apple-simulator`, since it runs the simulator in-process and
/// the released `purchase-ledger` links no simulator.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-demo", abstract: "Play purchases of each kind through the HTTP API and print what the ledger made of them.")

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Keep the API and the simulator serving after the demo (Ctrl-C to stop)")
    var serve = false

    func run() async throws {
        let logger = {
            var logger = Logger(label: "purchase-ledger.demo")
            logger.logLevel = .warning
            return logger
        }()
        let serveAfter = serve
        try await database.withDatabase(logger: logger) { adminConninfo, adminPool in
            // The simulator's ids start afresh every run, and a ledger delivers a transaction id
            // once, ever: a ledger that already holds events gets the demo in a schema of its own.
            let used = try await LedgerReads(pool: adminPool).holdsEvents()
            let schema = used ? "demo_" + String(WallClock.system() / 1000) : "(the database's own)"
            if used {
                try await adminPool.withConnection { try $0.execute("CREATE SCHEMA \(identifier: schema)") }
            }
            let conninfo = used ? try Conninfo.addingOptions("-c search_path=\(schema)", to: adminConninfo) : adminConninfo
            _ = try await withPool(conninfo, logger: logger) { pool in try await Migrator.ledger().migrate(pool: pool, logger: logger) }
            print("ledger schema \(schema); catalog: 4 products (LEDGER_CATALOG)")
            // `Tools/demo --ha`: reads from the standby, as `serve` does with DATABASE_READ_URL.
            let read = try ProcessInfo.processInfo.environment["DATABASE_READ_URL"].flatMap { $0.isEmpty ? nil : $0 }.map {
                used ? try Conninfo.addingOptions("-c search_path=\(schema)", to: $0) : $0
            }
            try await Self.play(conninfo: conninfo, readConninfo: read, serve: serveAfter, logger: logger)
        }
    }

    /// What the demo made, as the read commands print it, then the chain and documents checks
    /// (exit 3 when either fails), before any serving.
    private static func report(conninfo: String, refunded: String, clock: WallClock, logger: Logger) async throws {
        try await DemoReport.print(conninfo: conninfo, refundedTransaction: refunded, clock: clock, logger: logger)
        let (chain, documents) = try await withPool(conninfo, logger: logger) { pool in
            (try await ChainVerifier(pool: pool).verify(), try await DocumentVerifier(pool: pool).verify())
        }
        try printChainOutcome(chain)
        try printDocumentsOutcome(documents)
    }

    /// The ledger's server and the Apple simulator, the demo's purchases through the API, and,
    /// with `serve`, both kept up until Ctrl-C.
    private static func play(conninfo: String, readConninfo: String?, serve: Bool, logger: Logger) async throws {
        let catalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("purchase-ledger-demo-catalog-\(UUID().uuidString).json")
        try Data(DemoScript.catalog.utf8).write(to: catalogFile)
        let puzzleCatalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("purchase-ledger-demo-puzzle-\(UUID().uuidString).json")
        try Data(DemoScript.puzzleCatalog.utf8).write(to: puzzleCatalogFile)
        defer {
            try? FileManager.default.removeItem(at: catalogFile)
            try? FileManager.default.removeItem(at: puzzleCatalogFile)
        }
        var appleConfiguration = AppleSimulator.Configuration(machineClock: .system)
        appleConfiguration.bundleId = DemoScript.bundleId
        // A key pair of the demo's own: the simulator checks every Server API token against it.
        let key = P256.Signing.PrivateKey().pemRepresentation
        appleConfiguration.serverAPI = try ServerAPIAuthentication(
            privateKeyPEM: key, issuerId: "demo-issuer", keyId: "DEMOKEY001", bundleId: DemoScript.bundleId)
        // The key is the team's: it asks about the puzzle too.
        appleConfiguration.serverAPI?.otherBundleIds = [DemoScript.puzzleBundleId]
        // And one for the App Store Connect API, which serves the price points.
        let connectKey = P256.Signing.PrivateKey()
        appleConfiguration.connectPublicKeyPEM = connectKey.publicKey.pemRepresentation
        appleConfiguration.connectKeyId = "DEMOCONNECT1"
        appleConfiguration.connectIssuerId = "demo-connect-issuer"
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: appleConfiguration), logger: logger).start()
        let simulator = apple.simulator
        // The ledger's dates follow the simulated Apple's; retries and Server API tokens, real time.
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: serve ? 8080 : 0, conninfo: conninfo,
            // Each app's backend holds a token limited to its app; finance and support see both.
            tokens: try APITokens(parsing: [
                "\(DemoScript.appToken):app@\(DemoScript.bundleId)", "\(DemoScript.puzzleToken):app@\(DemoScript.puzzleBundleId)",
                "\(DemoScript.financeToken):finance", "\(DemoScript.supportToken):support",
            ].joined(separator: ",")),
            ledger: LedgerConfiguration(apps: try LedgerApps([
                AppSettings(bundleId: DemoScript.bundleId, catalogFile: catalogFile.path),
                AppSettings(bundleId: DemoScript.puzzleBundleId, catalogFile: puzzleCatalogFile.path),
            ])),
            verifyReceipt: .init(productionURL: apple.productionURL, sandboxURL: apple.sandboxURL),
            rootCertificates: [try .init(derEncoded: apple.simulator.rootCertificateDER)], poolSize: 8,
            workerPollInterval: .milliseconds(100), clock: WallClock({ simulator.nowMilliseconds }),
            machineClock: .system)
        configuration.serverAPI = ServerAPIConfiguration(
            issuerId: "demo-issuer", keyId: "DEMOKEY001", privateKeyPEM: key, bundleId: DemoScript.bundleId, baseURL: apple.baseURL)
        let connectConfiguration = AppStoreConnectConfiguration(
            issuerId: "demo-connect-issuer", keyId: "DEMOCONNECT1", privateKeyPEM: connectKey.pemRepresentation, baseURL: apple.baseURL)
        configuration.appStoreConnect = connectConfiguration
        // The demo reconciles, and reads price points, when its story says so.
        configuration.ledger.reconcileInterval = nil
        configuration.ledger.pricePointInterval = nil
        // Plain HTTP on this machine: a Secure cookie would never come back.
        configuration.consoleInsecureCookies = true
        configuration.readConninfo = readConninfo
        // The app's backend hears every change through a webhook receiver of the demo's own.
        let webhooks = try await DemoWebhooks.start(logger: logger)
        configuration.webhooks = (webhooks.endpoints, webhooks.signer)
        let server: RunningLedgerServer
        do {
            server = try await LedgerServer(configuration: configuration, logger: logger).start()
        } catch {
            await webhooks.stop()
            try? await apple.stop()
            throw error
        }
        apple.simulator.notificationURL = server.baseURL + "/v1/notifications/apple"
        do {
            var script = DemoScript(ledger: server.baseURL, simulator: apple.simulator)
            script.receiverDown = { try await webhooks.setDown($0) }
            let service = server.service
            let connect = try await AppStoreConnectClient(configuration: connectConfiguration, clock: .system, logger: logger)
            let refreshed = try await service.refreshPricePoints(using: connect, metadata: RequestMetadata(actor: "demo"))
            let points = refreshed.reduce(0) { sum, summary in
                if case .refreshed(let event) = summary.outcome { sum + event.points.count } else { sum }
            }
            print("price points: \(points) for \(refreshed.count) products, read from App Store Connect's API (purchase-ledger price-points refresh)\n")
            let refunded = try await script.play()
            try await script.playSecondApp()
            try await script.playAskingApple {
                let summaries = try await Reconciler(service: service, clients: try service.requireServerAPIClients(), logger: logger).run()
                return summaries.map(\.recorded).reduce(0, +)
            }
            // What the worker does every minute, now: Get Transaction Info for the sales seen only
            // in receipts, so their storefront (and so their price point) is known.
            if let asked = try await server.transactionInfoWorker?.runOnce() {
                print("\nApple's Get Transaction Info for sales seen only in receipts: \(asked.recorded) storefronts recorded\n")
            }
            try await DemoReconciliation.run(
                simulator: apple.simulator, service: service, reads: ReadModels(runner: server.runner, timeout: .seconds(30), clock: service.clock).opening(documentsWith: service.people.subjects))
            try await report(conninfo: conninfo, refunded: refunded, clock: service.clock, logger: logger)
            try await withPool(conninfo, logger: logger) { try await webhooks.report(pool: $0, refundedTransaction: refunded) }
            try await DemoFeed.consume(script)
            if serve {
                print("\nserving: API \(server.baseURL) (tokens \(DemoScript.appToken) for the game, \(DemoScript.puzzleToken) for the puzzle), Apple simulator \(apple.baseURL)/control; Ctrl-C stops")
                print("console: \(server.baseURL)/console/ (sign in with \(DemoScript.financeToken) for finance, \(DemoScript.supportToken) for support)")
                try await waitForInterrupt()
            }
        } catch {
            try? await server.stop()
            await webhooks.stop()
            try? await apple.stop()
            throw error
        }
        try await server.stop()
        await webhooks.stop()
        try await apple.stop()
    }

    /// Returns at Ctrl-C, so the private cluster is still stopped cleanly.
    private static func waitForInterrupt() async throws {
        let (interrupts, continuation) = AsyncStream<Void>.makeStream()
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT)
        source.setEventHandler { continuation.finish() }
        source.resume()
        for await _ in interrupts {}
        source.cancel()
    }
}
