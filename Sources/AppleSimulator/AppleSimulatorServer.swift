import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The simulator over HTTP: Apple's verifyReceipt endpoints, the App Store Server API, plus the
/// control API.
///
/// Routes (one port; the environment is the first path segment):
/// - `POST /production/verifyReceipt`, `POST /sandbox/verifyReceipt` — Apple's request
///   `{"receipt-data","password","exclude-old-transactions"}` and response format.
/// - `GET /control/clock`, `POST /control/clock/advance {"days","seconds"}`
/// - `POST /control/purchases {"apple_id","product_id","environment"?,"quantity"?,"app_account_token"?,"bundle_id"?,
///   "promotional_offer"?|"promotional_offer_jws"?|"introductory_offer_eligibility_jws"?}`
///   → 201 `{"transaction_id",...,"receipt_data","signed_transaction"}` (an offer the App Store
///   would refuse: 400 `invalid_offer`)
/// - `GET /control/transactions/{id}`, `GET .../{id}/signed`, `POST .../{id}/finish`,
///   `POST .../{id}/refund {"reason"?,"revocation_percentage"?}` (REFUND; a percentage in
///   thousandths below 100000 is a prorated refund), `POST .../{id}/revoke` (Family Sharing
///   revocation: REVOKE), `POST .../{id}/consumption-request {"reason"?}` → 202
///   (CONSUMPTION_REQUEST; reason default "UNINTENDED_PURCHASE")
/// - `GET /control/subscriptions/{original_transaction_id}`, `POST .../auto-renew {"enabled"}`,
///   `POST .../product {"product_id"}` (201 upgrade / 202 at next renewal), `POST .../billing {"fails"}`
/// - `GET /control/accounts/{apple_id}/receipt`, `POST .../receipt/refresh` (its `in_app` lists
///   renewals too, as Apple's refreshed receipts do), `GET .../transactions`
/// - `GET|POST|DELETE /control/failures` (`{"status"|"http_status"|"delay_ms"|"malformed", "next"|"fraction", "endpoint"?}`),
///   `GET /control/stats`
/// - `GET /control/root-certificate` (DER), `GET /control/root-certificate.pem`,
///   `GET /control/notifications`, `POST|GET /control/notification-sink`
/// - `GET|POST|DELETE /control/server-api/failures` (`{"http_status": 429|401|5xx, "retry_after"?,
///   "delay_ms"?, "next"?, "endpoint"?}`), `GET /control/server-api/stats`,
///   `GET /control/server-api/consumption-requests`, `GET /control/server-api/finish-requests`,
///   `GET /control/server-api/finish-counts`, `GET /control/server-api/renewal-extensions`,
///   `POST /control/server-api/mass-extensions/complete`
///
/// App Store Server API (Apple's paths and bodies, both environments on this port; `Authorization:
/// Bearer` JWT checked against `Configuration.serverAPI`, else 401): `GET /inApps/v1/transactions/{id}`,
/// `GET /inApps/v2/history/{id}`, `GET /inApps/v1/subscriptions/{id}`, `GET /inApps/v2/refund/lookup/{id}`,
/// `GET /inApps/v1/lookup/{orderId}`, `POST /inApps/v1/notifications/history`,
/// `PUT /inApps/v2/transactions/consumption/{id}`, `POST /inApps/v1/notifications/test`
/// (`?environment=Production` to pick the environment, not Apple's), `GET /inApps/v1/notifications/test/{token}`,
/// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`, `POST /inApps/v1/subscriptions/extend/mass`
/// (`?environment=` likewise), `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`,
/// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`,
/// `POST /inApps/v1/transactions/{transactionId}/finish`.
///
/// App Store Connect API price points (JWT checked against `Configuration.connectPublicKeyPEM`,
/// else 401 `NOT_AUTHORIZED`): `GET /v2/inAppPurchases/{appleId}/pricePoints`,
/// `GET /v1/subscriptions/{appleId}/pricePoints` (see `ConnectAPIRoutes`).
///
/// For outage tests, `RunningAppleSimulator.refuseConnections()` closes the port (connections are
/// refused) and `acceptConnections()` serves again on the same port; there is no route for it,
/// since the control API is behind the same port.
public struct AppleSimulatorServer: Sendable {
    /// Default address of `apple-simulator`: loopback, next to the ledger's 8080.
    public static let defaultAddress = "127.0.0.1:8090"

    public let simulator: AppleSimulator
    let logger: Logger

    public init(simulator: AppleSimulator, logger: Logger = Logger(label: "AppleSimulator")) {
        self.simulator = simulator
        self.logger = logger
    }

    /// Serves on `host:port` until SIGINT or SIGTERM: the entry point of
    /// `apple-simulator [--address HOST:PORT]`.
    ///
    /// - Parameters:
    ///   - address: "HOST:PORT", e.g. `AppleSimulatorServer.defaultAddress`.
    ///   - configuration: the store; see `AppleSimulator.Configuration(environment:)`.
    ///   - rootCertificatePath: when given, the root's DER is written there before serving, for
    ///     `APPLE_ROOT_CERTIFICATES`.
    public static func run(
        address: String, configuration: AppleSimulator.Configuration, rootCertificatePath: String? = nil,
        logger: Logger = Logger(label: "AppleSimulator")
    ) async throws {
        let (host, port) = try parse(address: address)
        let simulator = try AppleSimulator(configuration: configuration, logger: logger)
        if let rootCertificatePath {
            try Data(simulator.rootCertificateDER).write(to: URL(fileURLWithPath: rootCertificatePath))
        }
        let server = AppleSimulatorServer(simulator: simulator, logger: logger)
        try await server.application(host: host, port: port) { channel in
            // Say where to point the ledger, with the port actually bound (the address may say 0).
            let base = "http://\(host):\(channel.localAddress?.port ?? port)"
            logger.info(
                "Apple simulator ready",
                metadata: [
                    "APPLE_VERIFY_RECEIPT_PRODUCTION_URL": "\(base)/production/verifyReceipt",
                    "APPLE_VERIFY_RECEIPT_SANDBOX_URL": "\(base)/sandbox/verifyReceipt",
                    "APPLE_SERVER_API_URL": "\(base)",
                    "control": "\(base)/control", "root_certificate": "\(base)/control/root-certificate",
                ])
        }.runService()
    }

    /// Starts serving in the background on `host:port` (port 0: a free one) and returns once it
    /// accepts connections. Stop it with `RunningAppleSimulator.stop()`.
    public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> RunningAppleSimulator {
        let run = try await launch(host: host, port: port)
        return RunningAppleSimulator(server: self, host: host, run: run)
    }

    /// Runs the HTTP server in the background and returns once it listens: the first start and
    /// every `RunningAppleSimulator.acceptConnections()`.
    func launch(host: String, port: Int) async throws -> ServerRun {
        let (addresses, continuation) = AsyncStream<SocketAddress?>.makeStream()
        let application = application(host: host, port: port) { channel in
            continuation.yield(channel.localAddress)
            continuation.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = addresses.makeAsyncIterator()
        guard let running = await iterator.next() else {
            // The server stopped before running: surface its error (e.g. address in use).
            try await task.value
            throw SimulatorError(.portUnavailable, "the simulator's server did not start on \(host):\(port)")
        }
        guard let address = running, let bound = address.port else {
            await group.triggerGracefulShutdown()
            try? await task.value
            throw SimulatorError(.portUnavailable, "the simulator's server on \(host):\(port) has no local address")
        }
        return ServerRun(group: group, task: task, address: address, port: bound)
    }

    /// "HOST:PORT" → its parts; the port may be 0.
    public static func parse(address: String) throws -> (host: String, port: Int) {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (0...65_535).contains(port), colon != address.startIndex
        else {
            throw SimulatorError(.invalidRequest, "address is HOST:PORT, not \(address)")
        }
        return (String(address[..<colon]), port)
    }

    func application(
        host: String, port: Int, onRunning: @escaping @Sendable (any Channel) async -> Void
    ) -> some ApplicationProtocol {
        let router = Router()
        for environment in SimulatedEnvironment.allCases {
            router.post("\(environment.pathSegment)/verifyReceipt") { [simulator] request, _ in
                switch await simulator.answerVerifyReceipt(try await HTTPReplies.body(of: request), at: environment) {
                case .json(let data): HTTPReplies.json(data)
                case .httpStatus(let code): HTTPReplies.empty(.init(code: code))
                }
            }
        }
        ControlRoutes(simulator: simulator).register(on: router)
        ServerAPIRoutes(simulator: simulator, logger: logger).register(on: router)
        ConnectAPIRoutes(simulator: simulator, logger: logger).register(on: router)
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "AppleSimulator"),
            onServerRunning: onRunning, logger: logger)
    }
}
