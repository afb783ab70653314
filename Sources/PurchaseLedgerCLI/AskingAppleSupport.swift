import AppStore
import AppStoreClient
import ArgumentParser
import EventStore
import Foundation
import LedgerHTTP
import LedgerService
import Logging
import Postgres

extension DatabaseOptions {
    /// Runs `body` with the purchase flow and the App Store Server API clients (one per app), configured from
    /// the environment as `serve` is, acting as `ledger_app`. Without Server API credentials it
    /// fails with docs/http-api.md's clear error (exit 1).
    func withAskingApple<T: Sendable>(
        logger: Logger, _ body: @Sendable (PurchaseService, ServerAPIClients) async throws -> T
    ) async throws -> T {
        try await withDatabase(logger: logger) { conninfo, _ in
            let configuration = try Self.serverConfiguration(conninfo: conninfo)
            guard let api = configuration.serverAPI else {
                throw ValidationError("this command asks Apple: set APPLE_ISSUER_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY (App Store Server API)")
            }
            let clients = try await ServerAPIClients(
                configuration: api, bundleIds: configuration.ledger.apps.bundleIds, clock: configuration.machineClock, logger: logger)
            return try await Self.withPurchaseService(conninfo: conninfo, configuration: configuration, serverAPI: clients, logger: logger) {
                try await body($0, clients)
            }
        }
    }

    /// Runs `body` with the purchase flow as `serve` builds it, without the Server API: for
    /// commands that record what support or an operator does (`erase-user`, `erasure begin`).
    func withPurchaseService<T: Sendable>(logger: Logger, _ body: @Sendable (PurchaseService) async throws -> T) async throws -> T {
        try await withDatabase(logger: logger) { conninfo, _ in
            try await Self.withPurchaseService(
                conninfo: conninfo, configuration: try Self.serverConfiguration(conninfo: conninfo), serverAPI: nil, logger: logger, body)
        }
    }

    /// `serve`'s configuration from the environment; a bad one is the command's usage error.
    static func serverConfiguration(conninfo: String) throws -> ServerConfiguration {
        do {
            return try ServerConfiguration(environment: ProcessInfo.processInfo.environment, conninfo: conninfo, clock: .system)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The purchase flow as `serve` builds it from `configuration`, acting as `ledger_app` on a
    /// pool of its own, with the Server API client when the command has one.
    static func withPurchaseService<T: Sendable>(
        conninfo: String, configuration: ServerConfiguration, serverAPI: ServerAPIClients?, logger: Logger,
        _ body: @Sendable (PurchaseService) async throws -> T
    ) async throws -> T {
        let appConninfo = try Conninfo.addingOptions("-c role=ledger_app", to: conninfo)
        return try await withPool(appConninfo, maxConnections: 4, logger: logger) { pool in
            try await body(PurchaseService(
                store: EventStore(pool: pool, logger: logger), configuration: configuration.ledger,
                verifyReceipt: VerifyReceiptClient(configuration: configuration.verifyReceipt, clock: configuration.clock, logger: logger),
                signedData: SignedDataVerifiers(
                    rootCertificates: configuration.rootCertificates, apps: configuration.ledger.apps, clock: configuration.clock),
                serverAPI: serverAPI, logger: logger, clock: configuration.clock, machineClock: configuration.machineClock))
        }
    }
}
