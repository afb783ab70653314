import AppStoreClient
import Crypto
import EventStore
import Foundation
import Ledger
import LedgerHTTP
import LedgerStore
import Logging
import Postgres

/// What `config check` validates, in the order `serve` would meet it: the settings themselves
/// (as `serve` parses them), the files they name (keys, catalog), the URLs, and the database
/// with the roles `serve` acts as. The first failure throws `ConfigurationFailure` naming the
/// setting; each pass is reported as one line.
struct ConfigurationChecks {
    let environment: [String: String]

    private func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }

    func run(report: (String) -> Void) async throws {
        let conninfo = value("DATABASE_URL")
        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration(environment: environment, conninfo: conninfo ?? "", clock: .system)
        } catch {
            throw ConfigurationFailure(error)
        }
        report("LEDGER_HTTP_ADDRESS: listens on \(configuration.host):\(configuration.port)")
        let scopes = configuration.tokens.scopes
        report(scopes.isEmpty
            ? "LEDGER_API_TOKENS: none, so every call will be refused"
            : "LEDGER_API_TOKENS: \(scopes.count) token\(scopes.count == 1 ? "" : "s") (\(scopes.map(\.rawValue).joined(separator: ", ")))")
        if let file = configuration.ledger.apps.file {
            report("LEDGER_APPS: \(file) lists \(configuration.ledger.apps.bundleIds.joined(separator: ", "))")
        } else {
            report("APPLE_BUNDLE_ID: \(configuration.ledger.bundleId)")
        }
        try checkURL("APPLE_VERIFY_RECEIPT_PRODUCTION_URL", configuration.verifyReceipt.productionURL)
        try checkURL("APPLE_VERIFY_RECEIPT_SANDBOX_URL", configuration.verifyReceipt.sandboxURL)
        report("APPLE_ROOT_CERTIFICATES: \(configuration.rootCertificates.count) roots trusted")
        if let api = configuration.serverAPI {
            try checkKey("APPLE_PRIVATE_KEY", api.privateKeyPEM)
            try checkURL("APPLE_SERVER_API_URL", api.productionURL)
            try checkURL("APPLE_SERVER_API_URL", api.sandboxURL)
            report("APPLE_ISSUER_ID, APPLE_KEY_ID, APPLE_PRIVATE_KEY: the App Store Server API key parses")
        } else {
            report("App Store Server API: not configured, so the ledger does not ask Apple")
        }
        if let connect = configuration.appStoreConnect {
            try checkKey("APPLE_CONNECT_PRIVATE_KEY", connect.privateKeyPEM)
            try checkURL("APPLE_CONNECT_API_URL", connect.baseURL)
            report("APPLE_CONNECT_*: the App Store Connect key parses")
        }
        if let (endpoints, _) = configuration.webhooks {
            for endpoint in endpoints { try checkURL("LEDGER_WEBHOOKS (\(endpoint.name))", endpoint.url.absoluteString) }
            report("LEDGER_WEBHOOKS: \(endpoints.count) endpoints; LEDGER_WEBHOOK_SECRET parses")
        }
        for app in configuration.ledger.apps.apps {
            guard let catalog = app.catalogFile else { continue }
            let setting = configuration.ledger.apps.catalogSetting(of: app)
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: catalog))
            } catch {
                throw ConfigurationFailure(message: "\(setting): cannot read \(catalog)")
            }
            do {
                report("\(setting): \(try Catalog.parse(data).count) products")
            } catch {
                throw ConfigurationFailure(message: "\(setting): \(error)")
            }
        }
        guard let conninfo else {
            report("DATABASE_URL: unset, so serve starts a private cluster in .purchase-ledger/postgres (development only)")
            return
        }
        try await checkDatabase("DATABASE_URL", conninfo, report: report)
        if let read = configuration.readConninfo {
            try await checkDatabase("DATABASE_READ_URL", read, report: report)
        }
    }

    private func checkURL(_ name: String, _ text: String) throws {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = url.host, !host.isEmpty
        else {
            throw ConfigurationFailure(message: "\(name): not an http(s) URL: \(text)")
        }
    }

    private func checkKey(_ name: String, _ pem: String) throws {
        do {
            _ = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ConfigurationFailure(message: "\(name): not a P-256 private key in PEM (an App Store .p8 file)")
        }
    }

    /// Connects as the login role, then as `ledger_app` (what `serve` sets on each session), and
    /// reads the log's tables, which only a migrated database has. Pending migrations are no
    /// configuration error (the unit runs `migrate` first), so they are reported, not thrown.
    private func checkDatabase(_ name: String, _ conninfo: String, report: (String) -> Void) async throws {
        var logger = Logger(label: "purchase-ledger.config")
        logger.logLevel = .critical
        let (login, pending) = try await withPool(conninfo, maxConnections: 1, logger: logger) { pool in
            let login: (user: String, superuser: Bool, role: Bool, member: Bool)
            do {
                login = try await pool.withConnection { connection in
                    let row = try connection.query("""
                        SELECT current_user::text, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
                               to_regrole('ledger_app') IS NOT NULL,
                               to_regrole('ledger_app') IS NOT NULL AND pg_has_role(current_user, 'ledger_app', 'MEMBER')
                        """)[0]
                    return (try row.decode(0), try row.decode(1), try row.decode(2), try row.decode(3))
                }
            } catch {
                throw ConfigurationFailure(message: "\(name): cannot connect: \(error)")
            }
            do {
                return (login, try await Migrator.ledger().pending(pool: pool))
            } catch {
                throw ConfigurationFailure(message: "\(name): cannot read the schema's migrations: \(error)")
            }
        }
        report("\(name): reachable as \(login.user)\(login.superuser ? " (superuser)" : "")")
        guard login.role, pending.isEmpty else {
            report("\(name): \(pending.count) migrations pending: `purchase-ledger migrate` applies them (the unit runs it before serve)")
            return
        }
        guard login.superuser || login.member else {
            throw ConfigurationFailure(
                message: "\(name): role \(login.user) is not a member of ledger_app, which serve acts as (GRANT ledger_app TO \(login.user))")
        }
        do {
            let asApplication = try Conninfo.addingOptions("-c role=ledger_app", to: conninfo)
            // Reading the log as ledger_app proves the role's grants, as serve will use them.
            let (held, stats): (Bool, Bool) = try await withPool(asApplication, maxConnections: 1, logger: logger) { pool in
                let held = try await LedgerReads(pool: pool).holdsEvents()
                let stats: Bool = try await pool.withConnection {
                    try $0.query("SELECT pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')")[0].decode(0)
                }
                return (held, stats)
            }
            report("\(name): acts as ledger_app; schema current; \(held ? "the log holds events" : "no events yet")")
            if !stats {
                // Not an error: only the standby metric needs it (docs/monitoring.md).
                report("\(name): note: ledger_app cannot read pg_stat_replication, so /metrics leaves out the synchronous standby count (GRANT pg_read_all_stats TO ledger_app)")
            }
        } catch {
            throw ConfigurationFailure(message: "\(name): cannot act as ledger_app: \(error)")
        }
    }
}
