import ArgumentParser
import EventStore
import Foundation
import LedgerService
import LedgerStore
import Logging
import Postgres

/// `purchase-ledger catalog load FILE`: appends the file's products as `CatalogLoaded`.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Manage the product catalog.", subcommands: [Load.self])

    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "load", abstract: "Load a catalog file (docs/configuration.md format); purchases are priced as it stood when made.")

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The catalog JSON file")
        var file: String

        @Option(name: .customLong("bundle-id"), help: "The app whose products these are (default: the app of $APPLE_BUNDLE_ID or $LEDGER_APPS)")
        var bundleId: String?

        func run() async throws {
            let logger = Logger(label: "purchase-ledger.catalog")
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw ValidationError("cannot read \(file)")
            }
            // Every catalog names its app: one named by nothing would fall to the log's legacy app.
            let bundle: String
            if let bundleId {
                bundle = bundleId
            } else if let apps = try? LedgerApps(environment: ProcessInfo.processInfo.environment), !apps.isSeveral {
                bundle = apps.first.bundleId
            } else {
                throw ValidationError("name the app these products are for: --bundle-id (or APPLE_BUNDLE_ID, or LEDGER_APPS listing one app)")
            }
            let loaded = try await database.withDatabase(logger: logger) { conninfo, _ in
                try await withPool(try Conninfo.addingOptions("-c role=ledger_app", to: conninfo), logger: logger) { pool in
                    let log = LedgerLog(store: EventStore(pool: pool, logger: logger))
                    do {
                        return try await CatalogStore().load(data, bundleId: bundle, into: log, metadata: RequestMetadata(actor: "cli"))
                    } catch let error as LedgerServiceError where error.code == .invalidRequest {
                        throw ValidationError(error.message)
                    }
                }
            }
            print("catalog loaded: \(loaded.products.count) products from \(file)")
        }
    }
}
