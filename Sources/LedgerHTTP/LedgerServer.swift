import AppStore
import AppStoreClient
import AsyncHTTPClient
import EventStore
import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import LedgerConsole
import LedgerProjections
import LedgerQueries
import LedgerService
import LedgerStore
import LedgerWebhooks
import LedgerWorkers
import Logging
import NIOCore
import Postgres
import Sealing
import ServiceLifecycle

/// The ledger's HTTP server with its background work: the retry worker (pending receipts), the
/// projection runner (read models) and, when the App Store Server API is configured, the workers
/// that ask Apple (consumption answers, reconciliation, Get Transaction Info). Built in-process
/// by `purchase-ledger serve` and tests.
public struct LedgerServer: Sendable {
    public let configuration: ServerConfiguration
    let logger: Logger

    public init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, finishes in-flight requests and
    /// stops the workers and runner cleanly: the entry point of `purchase-ledger serve`. systemd
    /// hears `READY=1` once the listener is bound and `STOPPING=1` when the shutdown begins.
    public func run(notifier: SystemdNotifier? = nil) async throws {
        var parts = try await makeParts { channel in
            let address = "\(configuration.host):\(channel.localAddress?.port ?? configuration.port)"
            logger.info("PurchaseLedger serving", metadata: ["address": "\(address)"])
            notifier?.notify("READY=1\nSTATUS=serving on \(address)")
        }
        if let notifier {
            // Last in the list, so the first told of the shutdown (services stop in reverse).
            parts.services.append(ShutdownNotice(notifier: notifier))
        }
        let group = ServiceGroup(
            services: parts.services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        do {
            try await group.run()
        } catch {
            await parts.close()
            throw error
        }
        await parts.close()
    }

    /// Starts in the background on the configured address (port 0: a free one) and returns once
    /// it accepts connections.
    public func start() async throws -> RunningLedgerServer {
        let (ports, continuation) = AsyncStream<Int?>.makeStream()
        let parts = try await makeParts { channel in
            continuation.yield(channel.localAddress?.port)
            continuation.finish()
        }
        let group = ServiceGroup(services: parts.services, gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), let bound else {
            await parts.close()
            try await task.value
            throw LedgerServiceError(.invalidConfiguration, "the server did not start on \(configuration.host):\(configuration.port)")
        }
        return RunningLedgerServer(host: configuration.host, port: bound, group: group, task: task, parts: parts)
    }

    /// The pieces of a server: its services, in start order (shut down in reverse: the HTTP
    /// server first, so in-flight requests still have the worker and runner), and what to close.
    struct Parts: Sendable {
        var services: [any Service]
        var service: PurchaseService
        var runner: ProjectionRunner
        var worker: RetryWorker
        /// Asks Apple about the sales seen only in receipts; nil without the Server API (or
        /// with `transactionInfoInterval` nil).
        var transactionInfo: TransactionInfoWorker?
        var pool: ConnectionPool
        var httpClient: HTTPClient
        var reads: ReadModels

        func close() async {
            try? await httpClient.shutdown()
            await reads.replica?.close()
            await pool.close()
        }
    }

    func makeParts(onRunning: @escaping @Sendable (any Channel) async -> Void) async throws -> Parts {
        let conninfo = try configuration.sessionConninfo
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: configuration.poolSize, logger: logger)
        let store = EventStore(pool: pool, logger: logger)
        // A refused connection must fail at once (Apple down → pending), not retry until the
        // request's whole time-out: no connection re-establishment.
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        clientConfiguration.timeout.connect = .seconds(5)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let metrics = LedgerMetrics()
        for app in configuration.ledger.apps.apps where app.appAppleId == nil {
            // Apple's own verifier refuses to run in production without it; ours then checks the
            // bundle id and environment only (docs/design-notes.md, Apple's library evaluated).
            logger.warning(
                "APPLE_APP_APPLE_ID (or the app's app_apple_id in LEDGER_APPS) is not set: production signed notifications are not checked against the app's Apple id",
                metadata: ["app": "\(app.bundleId)"])
        }
        var serverAPI: ServerAPIClients?
        if let api = configuration.serverAPI {
            do {
                // One team key; a client per app, as Apple answers per app.
                serverAPI = try await ServerAPIClients(
                    configuration: api, bundleIds: configuration.ledger.apps.bundleIds, clock: configuration.machineClock, httpClient: httpClient,
                    logger: logger, onUnauthorized: { metrics.recordAppleUnauthorized() })
            } catch {
                await pool.close()
                try? await httpClient.shutdown()
                throw LedgerServiceError(.invalidConfiguration, "APPLE_PRIVATE_KEY: \(error)")
            }
        }
        var appStoreConnect: AppStoreConnectClient?
        if let connect = configuration.appStoreConnect {
            do {
                appStoreConnect = try await AppStoreConnectClient(
                    configuration: connect, clock: configuration.machineClock, httpClient: httpClient, logger: logger)
            } catch {
                await pool.close()
                try? await httpClient.shutdown()
                throw LedgerServiceError(.invalidConfiguration, "APPLE_CONNECT_PRIVATE_KEY: \(error)")
            }
        }
        let service = PurchaseService(
            store: store, configuration: configuration.ledger,
            verifyReceipt: VerifyReceiptClient(
                configuration: configuration.verifyReceipt, clock: configuration.clock, transport: HTTPVerifyReceiptTransport(httpClient: httpClient),
                logger: logger),
            signedData: SignedDataVerifiers(
                rootCertificates: configuration.rootCertificates, apps: configuration.ledger.apps, clock: configuration.clock),
            serverAPI: serverAPI, logger: logger, clock: configuration.clock, machineClock: configuration.machineClock,
            onAppleAttempt: { attempt in
                metrics.recordAppleAttempt(status: attempt.status.map { String($0.rawValue) } ?? attempt.failure?.code.rawValue ?? "http_\(attempt.httpStatus ?? 0)")
            })
        do {
            // The people's keys open with the key-encryption key given, or the server would
            // record what it cannot show: configuration (exit 78), not a restart loop.
            do {
                _ = try await service.people.subjects.lookupKey()
            } catch let error as SubjectStoreError {
                throw LedgerServiceError(.invalidConfiguration, "LEDGER_KEY_ENCRYPTION_KEY: \(error)")
            }
            // A log this release begins seals its people from its first event; one an earlier
            // release recorded waits for `purchase-ledger erasure begin` (docs/erasure.md).
            let beginsTheLog = try await store.headPosition() == 0
            // Before anything this server records: the log names the apps its events belong to.
            if let recorded = try await service.recordApps(metadata: RequestMetadata(actor: "serve")) {
                logger.info("apps recorded", metadata: [
                    "apps": "\(recorded.apps.map(\.bundleId).joined(separator: ","))", "legacy": "\(recorded.legacyBundleId ?? "none")",
                ])
            }
            if beginsTheLog, try await service.beginErasure(metadata: RequestMetadata(actor: "serve")) != nil {
                logger.info("people are sealed from the log's start (ErasureBegan recorded)")
            }
            // Erasures a restore undid are done again before anyone is served.
            if let journal = configuration.ledger.erasureJournal {
                let done = try await service.reapply(journal, metadata: RequestMetadata(actor: "serve:erasure-journal"))
                if done.keysDestroyed > 0 || done.recorded > 0 {
                    logger.warning("erasures a restore had undone were applied again from LEDGER_ERASURE_JOURNAL", metadata: [
                        "listed": "\(done.listed)", "keys_destroyed": "\(done.keysDestroyed)", "recorded_again": "\(done.recorded)",
                    ])
                }
            }
        } catch {
            await pool.close()
            try? await httpClient.shutdown()
            throw error
        }
        // Each app's catalog, as its file says now.
        for app in configuration.ledger.apps.apps {
            guard let file = app.catalogFile else { continue }
            let setting = configuration.ledger.apps.catalogSetting(of: app)
            do {
                // A file that cannot be read or parsed is configuration (exit 78, no restart loop);
                // a database that fails to record it is not.
                let data: Data
                do {
                    data = try Data(contentsOf: URL(fileURLWithPath: file))
                    _ = try Catalog.parse(data)
                } catch let error as CatalogError {
                    throw LedgerServiceError(.invalidConfiguration, "\(setting): \(error)")
                } catch {
                    throw LedgerServiceError(.invalidConfiguration, "\(setting): cannot read \(file)")
                }
                let loaded = try await service.loadCatalog(data, bundleId: app.bundleId, metadata: RequestMetadata(actor: "serve:LEDGER_CATALOG"))
                logger.info("catalog loaded", metadata: ["app": "\(app.bundleId)", "file": "\(file)", "products": "\(loaded.products.count)"])
            } catch {
                await pool.close()
                try? await httpClient.shutdown()
                throw error
            }
        }
        let runner = ProjectionRunner(store: store, conninfo: conninfo, logger: logger)
        let worker = RetryWorker(service: service, pollInterval: configuration.workerPollInterval, logger: logger)
        let replica = try configuration.readSessionConninfo.map { conninfo in
            ReplicaReads(
                pool: ConnectionPool(conninfo: conninfo, maxConnections: configuration.poolSize, logger: logger),
                lagLimit: configuration.replicaLagLimit, logger: logger)
        }
        let reads = ReadModels(runner: runner, timeout: configuration.ledger.readYourWritesTimeout, clock: service.clock, replica: replica)
            .opening(documentsWith: service.people.subjects)
        let routes = LedgerRoutes(
            service: service, reads: reads, authenticator: Authenticator(tokens: configuration.tokens),
            health: HealthCheck(pool: pool, worker: worker, runner: runner), metrics: metrics)
        let tokens = configuration.tokens
        let console: ConsoleRoutes<LedgerRequestContext>
        do {
            console = try await Console(
                reads: reads, service: service, pool: pool, signIn: { tokens.consoleSignIn($0) },
                insecureCookies: configuration.consoleInsecureCookies, commission: configuration.ledger.commission, logger: logger,
                tokenCheck: { tokens.consoleSignsIn(named: $0, as: $1) }
            ).routes()
        } catch {
            await pool.close()
            try? await httpClient.shutdown()
            throw error
        }
        // Middleware goes on before the routes, so the methods per path come from a probe.
        let probe = Router(context: LedgerRequestContext.self)
        routes.register(on: probe)
        console.register(on: probe)
        let router = Router(context: LedgerRequestContext.self)
        router.add(middleware: RequestMiddleware(
            metrics: metrics, allowed: AllowedMethods(probe.routes), headPosition: { try await store.headPosition() }, people: service.people))
        routes.register(on: router)
        console.register(on: router)
        let application = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: [MalformedRequestHandler()])),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "PurchaseLedger"),
            onServerRunning: onRunning, logger: logger)
        var services: [any Service] = [BackgroundLoop { await worker.run() }]
        if configuration.runsProjections {
            services.append(BackgroundLoop { await runner.run() })
            // The finance reports' sums follow the projections (docs/finance-over-time.md): a
            // report corrects them for what is not summed yet, so the pace only sets its speed.
            let summarizer = HistorySummarizer(pool: pool, commission: configuration.ledger.commission, logger: logger)
            services.append(BackgroundLoop { await summarizer.run(every: .seconds(1)) })
        }
        var transactionInfo: TransactionInfoWorker?
        if let serverAPI {
            // Asking Apple: refund requests answered, lost notifications recovered, the sales
            // seen only in receipts given Apple's signed storefront and price.
            let answerer = ConsumptionAnswerer(service: service, clients: serverAPI, pollInterval: configuration.workerPollInterval, logger: logger)
            services.append(BackgroundLoop { await answerer.run() })
            if let interval = configuration.ledger.reconcileInterval {
                let reconciler = Reconciler(service: service, clients: serverAPI, logger: logger)
                services.append(BackgroundLoop { await reconciler.run(every: interval) })
            }
            if configuration.ledger.finishTransactions {
                // The server half of the lost order: what the ledger delivered, it finishes.
                let finisher = FinishTransactionWorker(service: service, interval: configuration.ledger.finishInterval, logger: logger)
                services.append(BackgroundLoop { await finisher.run() })
            }
            if let interval = configuration.ledger.transactionInfoInterval {
                let asker = TransactionInfoWorker(service: service, clients: serverAPI, interval: interval, logger: logger)
                transactionInfo = asker
                services.append(BackgroundLoop { await asker.run() })
            }
        }
        if let appStoreConnect, let interval = configuration.ledger.pricePointInterval {
            // Apple's price points, read at start and then daily: what each sale's storefront
            // and price pays, as revenue reports it.
            let pricePoints = PricePointWorker(service: service, client: appStoreConnect, interval: interval, logger: logger)
            services.append(BackgroundLoop { await pricePoints.run() })
        }
        var deliverers: [WebhookDeliverer] = []
        if let (endpoints, signer) = configuration.webhooks {
            // Telling the app's backends: one deliverer per endpoint, following the webhook
            // projection; of several servers, the lease holder of each endpoint sends.
            let sender = WebhookSender(http: httpClient, signer: signer, clock: configuration.machineClock)
            let owner = "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)/\(UUID().uuidString.prefix(8))"
            for endpoint in endpoints {
                let deliverer = WebhookDeliverer(
                    endpoint: endpoint, pool: pool, sender: sender, runner: runner, owner: owner,
                    settings: configuration.webhookDelivery, people: service.people, logger: logger)
                deliverers.append(deliverer)
                services.append(BackgroundLoop { await deliverer.run() })
            }
        }
        if let settings = configuration.digests {
            // Published outside the database as it runs: what a restore is later proved against.
            // Paced and stamped by the machine's clock: a publication is a real moment, not a
            // ledger date (which a test's or the demo's simulated Apple may hold still).
            let publisher = DigestPublisher(pool: pool, settings: settings, clock: configuration.machineClock, logger: logger)
            services.append(BackgroundLoop { await publisher.run() })
        }
        services.append(application)
        return Parts(
            services: services,
            service: service, runner: runner, worker: worker, transactionInfo: transactionInfo, pool: pool, httpClient: httpClient,
            reads: reads)
    }
}

/// A loop that runs until graceful shutdown, then is cancelled and returns.
struct BackgroundLoop: Service {
    let body: @Sendable () async -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown { await body() }
    }
}

/// A server started by `LedgerServer.start()`.
public struct RunningLedgerServer: Sendable {
    public let host: String
    public let port: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let parts: LedgerServer.Parts

    /// "http://HOST:PORT".
    public var baseURL: String { "http://\(host):\(port)" }
    /// The service, for tests that look behind the API.
    public var service: PurchaseService { parts.service }
    public var worker: RetryWorker { parts.worker }
    /// The Get Transaction Info worker, when the Server API is configured and it runs.
    public var transactionInfoWorker: TransactionInfoWorker? { parts.transactionInfo }
    public var runner: ProjectionRunner { parts.runner }
    /// The read models the routes and the console read through (and their replica, if any).
    public var reads: ReadModels { parts.reads }

    /// Finishes in-flight requests, stops the worker and runner, and closes the pool.
    public func stop() async throws {
        await group.triggerGracefulShutdown()
        let result = await task.result
        await parts.close()
        try result.get()
    }
}

/// Sends `STOPPING=1` as soon as the graceful shutdown reaches it, then returns so the rest of
/// the shutdown goes on: systemd then knows the stop was asked for, not a crash.
struct ShutdownNotice: Service {
    let notifier: SystemdNotifier

    func run() async throws {
        try? await gracefulShutdown()
        notifier.notify("STOPPING=1")
    }
}
