import AppStore
import AppStoreClient
import Foundation
import LedgerService
import LedgerStore
import LedgerWebhooks
import Postgres
import Primitives
import X509

/// Everything `purchase-ledger serve` needs, from the environment of docs/configuration.md.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0: any free port (tests).
    public var port: Int
    /// The database, as the login role; the server adds `SET ROLE ledger_app` to it.
    public var conninfo: String
    public var tokens: APITokens
    public var ledger: LedgerConfiguration
    public var verifyReceipt: VerifyReceiptConfiguration
    /// Roots trusted for signed data: Apple Root CA G3 plus `APPLE_ROOT_CERTIFICATES`.
    public var rootCertificates: [Certificate]
    public var poolSize: Int
    public var workerPollInterval: Duration
    /// Act as `ledger_app` (INSERT and SELECT only on the log); off only for tests that
    /// deliberately use a schema-less superuser setup.
    public var actAsApplicationRole: Bool = true
    /// The ledger's now (`PurchaseService.clock`): every date it records, the statuses it reads
    /// and the windows it reconciles. `.system` in `serve`; tests and the demo set the simulator's
    /// clock, so Apple's dates and ours agree.
    public var clock: WallClock
    /// The machine's own time, for what must pass in real time whatever `clock` says: the retry
    /// schedule of pending receipts, and the App Store Server API's tokens, which Apple checks
    /// against its own clock. `clock` in `serve`; `.system` beside a simulated `clock`.
    public var machineClock: WallClock
    /// The App Store Server API's credentials and URL; nil: the ledger does not ask Apple.
    public var serverAPI: ServerAPIConfiguration?
    /// The App Store Connect API's key and URL (`APPLE_CONNECT_*`), for price points; nil: no
    /// price points are read.
    public var appStoreConnect: AppStoreConnectConfiguration?
    /// `LEDGER_CONSOLE_INSECURE_COOKIES=1`: the console's cookies without `Secure`, for plain
    /// HTTP on one's own machine. Off: a console behind TLS, as in production.
    public var consoleInsecureCookies = false
    /// `DATABASE_READ_URL`: one or more standbys for read routes, reports, timelines and the
    /// console; nil: every read goes to `conninfo`.
    public var readConninfo: String?
    /// How long a read waits for a standby to replay the caller's writes before the primary
    /// answers it instead.
    public var replicaLagLimit: Duration = .seconds(2)
    /// `LEDGER_WEBHOOKS` and `LEDGER_WEBHOOK_SECRET`: the endpoints told of every change, and
    /// how their messages are signed; nil when no endpoint is set.
    public var webhooks: (endpoints: [WebhookEndpoint], signer: WebhookSigner)?
    /// Settings of each endpoint's delivery (tests shorten the lease).
    public var webhookDelivery = WebhookDeliverer.Settings()
    /// `LEDGER_DIGEST_INTERVAL` and `LEDGER_DIGEST_FILE`: how often the chain's digest is
    /// published, and the file it is appended to; nil: never (interval 0).
    public var digests: DigestPublisher.Settings? = DigestPublisher.Settings(interval: .seconds(3_600))
    /// Off only for `Tools/bench flow`'s write-path floor: a server that records, asks Apple and
    /// answers, but applies no projection, so the CPU it spends per receipt is the write path's
    /// alone. Its reads would wait for projections that never move: nothing else turns it off.
    @_spi(Bench) public var runsProjections = true

    public init(
        host: String = "127.0.0.1", port: Int = 8080, conninfo: String, tokens: APITokens, ledger: LedgerConfiguration,
        verifyReceipt: VerifyReceiptConfiguration, rootCertificates: [Certificate], poolSize: Int = 16,
        workerPollInterval: Duration = .milliseconds(500), clock: WallClock, machineClock: WallClock
    ) {
        self.host = host
        self.port = port
        self.conninfo = conninfo
        self.tokens = tokens
        self.ledger = ledger
        self.verifyReceipt = verifyReceipt
        self.rootCertificates = rootCertificates
        self.poolSize = poolSize
        self.workerPollInterval = workerPollInterval
        self.clock = clock
        self.machineClock = machineClock
    }

    /// Reads `LEDGER_HTTP_ADDRESS`, `LEDGER_API_TOKENS`, `LEDGER_CATALOG`, the Apple settings and
    /// `LEDGER_TRANSFER_POLICY`; `address` (a flag) overrides the variable. `clock` is both the
    /// ledger's and the machine's (`.system` in `serve`).
    public init(environment: [String: String], conninfo: String, address: String? = nil, clock: WallClock) throws {
        let ledger = try LedgerConfiguration(environment: environment)
        let (host, port) = try Self.parse(address: address ?? environment["LEDGER_HTTP_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1:8080")
        let roots: [Certificate]
        do {
            roots = try AppleRootCertificates.trusted(environment: environment)
        } catch {
            throw LedgerServiceError(.invalidConfiguration, "APPLE_ROOT_CERTIFICATES: \(error)")
        }
        self.init(
            host: host, port: port, conninfo: conninfo, tokens: try APITokens(parsing: environment["LEDGER_API_TOKENS"] ?? ""),
            ledger: ledger, verifyReceipt: VerifyReceiptConfiguration(environment: environment, sharedSecret: ledger.sharedSecret),
            rootCertificates: roots, clock: clock, machineClock: clock)
        if let app = tokens.limitedApps.subtracting(ledger.apps.bundleIds).sorted().first {
            throw LedgerServiceError(
                .invalidConfiguration,
                "LEDGER_API_TOKENS: a token is limited to app \(app), which this ledger does not serve (\(ledger.apps.bundleIds.joined(separator: ", ")))")
        }
        consoleInsecureCookies = environment["LEDGER_CONSOLE_INSECURE_COOKIES"] == "1"
        readConninfo = environment["DATABASE_READ_URL"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            serverAPI = try ServerAPIConfiguration.fromEnvironment(environment, bundleId: ledger.bundleId)
        } catch {
            throw LedgerServiceError(.invalidConfiguration, error.message)
        }
        do {
            appStoreConnect = try AppStoreConnectConfiguration.fromEnvironment(environment)
        } catch {
            throw LedgerServiceError(.invalidConfiguration, error.message)
        }
        webhooks = try Self.webhooks(environment)
        digests = try Self.digests(environment)
    }

    static func webhooks(_ environment: [String: String]) throws -> (endpoints: [WebhookEndpoint], signer: WebhookSigner)? {
        do {
            let endpoints = try WebhookEndpoint.parse(environment["LEDGER_WEBHOOKS"] ?? "")
            guard !endpoints.isEmpty else { return nil }
            guard let secret = environment["LEDGER_WEBHOOK_SECRET"], !secret.isEmpty else {
                throw LedgerServiceError(.invalidConfiguration, "LEDGER_WEBHOOK_SECRET is required when LEDGER_WEBHOOKS is set")
            }
            return (endpoints, WebhookSigner(secrets: try WebhookSecrets(secret)))
        } catch let error as WebhookEndpoint.Invalid {
            throw LedgerServiceError(.invalidConfiguration, error.description)
        } catch let error as WebhookSecrets.Invalid {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_WEBHOOK_SECRET: \(error.description)")
        }
    }

    static func digests(_ environment: [String: String]) throws -> DigestPublisher.Settings? {
        let text = environment["LEDGER_DIGEST_INTERVAL"].flatMap { $0.isEmpty ? nil : $0 } ?? "3600"
        guard let seconds = Int(text), seconds >= 0 else {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_DIGEST_INTERVAL is whole seconds (0 = never), not \(text)")
        }
        let file = environment["LEDGER_DIGEST_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        if let file {
            // Refused at start, not at the first publication an hour later.
            guard AppendOnlyFile(path: file, setting: "LEDGER_DIGEST_FILE").isWritable else {
                throw LedgerServiceError(.invalidConfiguration, "LEDGER_DIGEST_FILE \(file) cannot be written (a file this user may append to, in a folder that exists)")
            }
        }
        return seconds == 0 ? nil : DigestPublisher.Settings(interval: .seconds(seconds), file: file)
    }

    static func parse(address: String) throws -> (String, Int) {
        guard let colon = address.lastIndex(of: ":"), colon != address.startIndex,
              let port = Int(address[address.index(after: colon)...]), (0...65_535).contains(port)
        else {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_HTTP_ADDRESS is HOST:PORT, not \(address)")
        }
        return (String(address[..<colon]), port)
    }

    /// The conninfo the server's connections use: `role=ledger_app` set at session start, so
    /// the server cannot change history even if it wanted to.
    var sessionConninfo: String {
        get throws {
            actAsApplicationRole ? try Conninfo.addingOptions("-c role=ledger_app", to: conninfo) : conninfo
        }
    }

    /// `readConninfo` acting as `ledger_app`, like the primary's sessions.
    var readSessionConninfo: String? {
        get throws {
            guard let readConninfo else { return nil }
            return actAsApplicationRole ? try Conninfo.addingOptions("-c role=ledger_app", to: readConninfo) : readConninfo
        }
    }
}
