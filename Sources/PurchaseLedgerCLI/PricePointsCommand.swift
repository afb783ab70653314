import AppStore
import AppStoreClient
import ArgumentParser
import EventStore
import Foundation
import LedgerHTTP
import LedgerService
import LedgerStore
import Logging
import Postgres

/// `purchase-ledger price-points refresh`: reads Apple's price points (App Store Connect API)
/// for every catalog product with an `apple_id` and records them, as `serve` does daily.
struct PricePointsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "price-points", abstract: "Apple's price points (App Store Connect API).", subcommands: [Refresh.self])

    struct Refresh: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refresh",
            abstract: "Read and record Apple's price points for every catalog product with an apple_id.",
            discussion: "Needs APPLE_CONNECT_ISSUER_ID, APPLE_CONNECT_KEY_ID and APPLE_CONNECT_PRIVATE_KEY (an App Store Connect team key); APPLE_CONNECT_API_URL overrides Apple's URL. Each product's pages are kept verbatim and a PricePointsRefreshed event is appended.")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = Logger(label: "purchase-ledger.price-points")
            let environment = ProcessInfo.processInfo.environment
            let connect: AppStoreConnectConfiguration
            do {
                guard let configured = try AppStoreConnectConfiguration.fromEnvironment(environment) else {
                    throw NotConfigured(message: "price points are read from the App Store Connect API: set APPLE_CONNECT_ISSUER_ID, APPLE_CONNECT_KEY_ID and APPLE_CONNECT_PRIVATE_KEY (the .p8 key's path)")
                }
                connect = configured
            } catch let error as AppStoreError {
                throw NotConfigured(message: error.message)
            }
            let summaries = try await database.withDatabase(logger: logger) { conninfo, _ in
                let configuration: ServerConfiguration
                do {
                    configuration = try ServerConfiguration(environment: environment, conninfo: conninfo, clock: .system)
                } catch {
                    throw NotConfigured(message: "\(error)")
                }
                let client: AppStoreConnectClient
                do {
                    client = try await AppStoreConnectClient(configuration: connect, clock: configuration.machineClock, logger: logger)
                } catch {
                    throw NotConfigured(message: "\(error)")
                }
                return try await DatabaseOptions.withPurchaseService(conninfo: conninfo, configuration: configuration, serverAPI: nil, logger: logger) {
                    try await $0.refreshPricePoints(using: client, metadata: RequestMetadata(actor: "cli"))
                }
            }
            var failed = 0
            // With several apps, each line names its app first: a product id may be in two.
            let several = Set(summaries.map(\.bundleId)).count > 1
            for summary in summaries {
                let product = several ? "\(summary.bundleId) \(summary.productId)" : summary.productId
                switch summary.outcome {
                case .refreshed(let event):
                    print("\(product) (Apple id \(event.appleId), \(event.kind)): \(summary.pointCount) price points in \(summary.territoryCount) territories")
                case .skippedWithoutAppleId:
                    print("\(product): skipped, the catalog gives it no apple_id")
                case .failed(let error):
                    failed += 1
                    print("\(product): not refreshed: \(error)")
                }
            }
            if summaries.isEmpty { print("the catalog has no products") }
            if failed > 0 { throw ExitCode.failure }
        }
    }

    /// The App Store Connect API is not (or wrongly) configured: exit 1 with the message.
    struct NotConfigured: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
