import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
import Postgres

/// What one product's price-point refresh did.
public struct PricePointsRefreshSummary: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        /// Apple's price points are recorded now (`PricePointsRefreshed`).
        case refreshed(PricePointsRefreshed)
        /// The catalog gives the product no `apple_id`: App Store Connect cannot be asked.
        case skippedWithoutAppleId
        /// Apple could not answer or refused; nothing recorded for this product.
        case failed(AppStoreConnectError)
    }

    public var productId: String
    public var outcome: Outcome
    /// The app whose product it is.
    public var bundleId: String

    public init(productId: String, outcome: Outcome, bundleId: String = "") {
        self.productId = productId
        self.outcome = outcome
        self.bundleId = bundleId
    }

    /// The points recorded now; 0 unless refreshed.
    public var pointCount: Int {
        if case .refreshed(let event) = outcome { return event.points.count }
        return 0
    }

    /// The distinct territories recorded now; 0 unless refreshed.
    public var territoryCount: Int {
        if case .refreshed(let event) = outcome { return Set(event.points.map(\.territory)).count }
        return 0
    }
}

extension PurchaseService {
    /// Document kind of an App Store Connect price-points page.
    public static let pricePointsDocumentKind = "apple_price_points"

    /// Reads Apple's price points (App Store Connect API) for every product with an `apple_id` of
    /// every app's catalog (app by app, as configured; in product id order), and records each
    /// product's in one transaction: every page verbatim as a document (kind
    /// `apple_price_points`) and `PricePointsRefreshed`, naming its app, appended to the app's
    /// `AppStreams.pricePoints(productId:)` expecting any version, so each refresh is a new event
    /// and a replay sees the table in force at any position. Auto-renewables are read from the
    /// subscription list, every other kind from the in-app purchase list.
    ///
    /// Products without an `apple_id` are reported as skipped. A product Apple refuses (404, a
    /// malformed page) is reported as failed and the others are still read; Apple refusing the
    /// key (401, 403, a key that cannot sign) or being unavailable (429, 5xx) after the client's
    /// retries throws the `AppStoreConnectError`, as asking for the rest would fare no better.
    /// Database failures throw `LedgerServiceError`.
    public func refreshPricePoints(using client: AppStoreConnectClient, metadata: RequestMetadata) async throws -> [PricePointsRefreshSummary] {
        var summaries: [PricePointsRefreshSummary] = []
        for app in configuration.apps.bundleIds {
            summaries += try await refreshPricePoints(of: app, using: client, metadata: metadata)
        }
        return summaries
    }

    private func refreshPricePoints(
        of app: String, using client: AppStoreConnectClient, metadata: RequestMetadata
    ) async throws -> [PricePointsRefreshSummary] {
        let (catalog, streams) = try await mappingDatabaseErrors { (try await reads.catalog(of: app), try await reads.streams(of: app)) }
        var summaries: [PricePointsRefreshSummary] = []
        for product in catalog.products.values.sorted(by: { $0.productId < $1.productId }) {
            guard let appleId = product.appleId, !appleId.isEmpty else {
                summaries.append(PricePointsRefreshSummary(productId: product.productId, outcome: .skippedWithoutAppleId, bundleId: app))
                continue
            }
            let kind: PricePointsRefreshed.Kind = product.kind == .autoRenewable ? .subscription : .inApp
            let read: PricePointPages
            do throws(AppStoreConnectError) {
                read = try await client.pricePoints(appleId: appleId, family: kind == .subscription ? .subscription : .inApp)
            } catch {
                if error.isRetryable || error.isConfiguration { throw error }
                logger.warning("App Store Connect gave no price points for a product", metadata: [
                    "product_id": "\(product.productId)", "apple_id": "\(appleId)", "error": "\(error)",
                ])
                summaries.append(PricePointsRefreshSummary(productId: product.productId, outcome: .failed(error), bundleId: app))
                continue
            }
            let documents = read.pages.map { DocumentStore.insert($0, kind: Self.pricePointsDocumentKind) }
            let event = PricePointsRefreshed(
                productId: product.productId, appleId: appleId, kind: kind, documentSha256List: documents.map(\.name),
                points: read.points,
                refreshedAtMs: clock(), bundleId: app)
            try await mappingDatabaseErrors {
                _ = try await log.append(
                    [LedgerAppend(stream: streams.pricePoints(productId: product.productId), expectation: .any, events: [.pricePointsRefreshed(event)])],
                    metadata: metadata, alongside: documents.map(\.statement))
            }
            summaries.append(PricePointsRefreshSummary(productId: product.productId, outcome: .refreshed(event), bundleId: app))
        }
        return summaries
    }
}
