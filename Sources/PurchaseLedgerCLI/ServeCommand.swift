import AppStoreClient
import ArgumentParser
import Foundation
import LedgerHTTP
import Logging

/// `purchase-ledger serve`: the HTTP API of CONTRACT.md, with the retry worker and the
/// projection runner, until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the ledger's HTTP API (orders, receipts, notifications, reads).")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "HOST:PORT to listen on (default: $LEDGER_HTTP_ADDRESS, else 127.0.0.1:8080)")
    var address: String?

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.serve")
        try await database.withDatabase(logger: logger) { conninfo, _ in
            let configuration: ServerConfiguration
            do {
                configuration = try ServerConfiguration(
                    environment: ProcessInfo.processInfo.environment, conninfo: conninfo, address: address, clock: .system)
            } catch {
                throw ValidationError("\(error)")
            }
            try await LedgerServer(configuration: configuration, logger: logger).run()
        }
    }
}
