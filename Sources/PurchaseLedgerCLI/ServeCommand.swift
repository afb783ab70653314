import AppStoreClient
import ArgumentParser
import EventStore
import Foundation
import LedgerHTTP
import LedgerStore
import Logging

/// `purchase-ledger serve`: the HTTP API of docs/http-api.md, with the retry worker and the
/// projection runner, until SIGTERM or SIGINT. A bad setting exits 78 naming it, so systemd's
/// `RestartPreventExitStatus=78` keeps it from restarting in a loop; a database whose schema
/// lacks this release's migrations exits 1 saying to run `migrate`.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the ledger's HTTP API (orders, receipts, notifications, reads).")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "HOST:PORT to listen on (default: $LEDGER_HTTP_ADDRESS, else 127.0.0.1:8080)")
    var address: String?

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.serve")
        let environment = ProcessInfo.processInfo.environment
        try await database.withDatabase(logger: logger) { conninfo, adminPool in
            let configuration: ServerConfiguration
            do {
                configuration = try ServerConfiguration(environment: environment, conninfo: conninfo, address: address, clock: .system)
            } catch {
                throw ConfigurationFailure(error)
            }
            let pending = try await Migrator.ledger().pending(pool: adminPool)
            guard pending.isEmpty else {
                FileHandle.standardError.write(Data(
                    "error: the database lacks \(pending.count) migrations of this release (\(pending.joined(separator: ", "))): run `purchase-ledger migrate` first\n".utf8))
                throw ExitCode.failure
            }
            do {
                try await LedgerServer(configuration: configuration, logger: logger)
                    .run(notifier: SystemdNotifier(environment: environment, logger: logger))
            } catch let error as LedgerServiceError where error.code == .invalidConfiguration {
                throw ConfigurationFailure(error)
            }
        }
    }
}
