import Foundation
import Ledger
import LedgerStore

extension CatalogStore {
    /// Checks a catalog file (docs/configuration.md format) and appends its products, as the
    /// products of the app `bundleId`.
    public func load(_ file: Data, bundleId: String, into log: LedgerLog, metadata: RequestMetadata) async throws -> CatalogLoaded {
        let products: [Product]
        do {
            products = try Catalog.parse(file)
        } catch {
            throw LedgerServiceError(.invalidRequest, error.description)
        }
        return try await mappingDatabaseErrors {
            let loaded = CatalogLoaded(products: products, fileSha256: DocumentStore.name(of: file), bundleId: bundleId)
            try await log.append([LedgerAppend(stream: Streams.catalog, expectation: .any, events: [.catalogLoaded(loaded)])], metadata: metadata)
            return loaded
        }
    }
}
