import AppStoreClient
import LedgerStore

extension PurchaseService {
    /// Every app's client, or the clear error docs/http-api.md promises when no credentials
    /// are configured.
    public func requireServerAPIClients() throws(LedgerServiceError) -> ServerAPIClients {
        guard let serverAPI else {
            throw LedgerServiceError(
                .appleNotConfigured, "the ledger has no App Store Server API credentials (APPLE_ISSUER_ID, APPLE_KEY_ID, APPLE_PRIVATE_KEY)")
        }
        return serverAPI
    }

    /// The client that asks Apple about `bundleId`'s transactions: Apple answers per app (the
    /// token's `bid`), so a call about one app's purchase must name that app. Nil (a fact
    /// recorded before events named their app) is the log's legacy app, as every read takes it.
    public func requireServerAPI(for bundleId: String?) async throws -> ServerAPIClient {
        let clients = try requireServerAPIClients()
        let legacy = bundleId == nil ? try await mappingDatabaseErrors { try await reads.legacyApp() } : nil
        guard let client = clients.client(for: bundleId, legacyApp: legacy) else {
            throw LedgerServiceError(
                .appleNotConfigured, "the ledger no longer serves \(bundleId ?? legacy ?? "") (LEDGER_APPS): Apple cannot be asked about its purchases")
        }
        return client
    }
}
