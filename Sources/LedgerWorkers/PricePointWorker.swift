import AppStoreClient
import Foundation
import LedgerService
import LedgerStore
import Logging
import Synchronization

/// Reads Apple's price points for the catalog every `interval` (a day by default,
/// `LedgerConfiguration.pricePointInterval`), the first pass at start, and records each
/// product's as a new `PricePointsRefreshed` (`PurchaseService.refreshPricePoints`). Never on
/// the request path. A pass Apple cannot answer (429, 5xx, a refused key) is logged and the
/// next comes after the interval; several servers each refresh, which records the same table
/// more than once and changes no price.
public final class PricePointWorker: Sendable {
    let service: PurchaseService
    let client: AppStoreConnectClient
    let interval: Duration
    let logger: Logger
    private let passCount = Mutex(0)

    public init(service: PurchaseService, client: AppStoreConnectClient, interval: Duration = .seconds(86_400), logger: Logger) {
        self.service = service
        self.client = client
        self.interval = interval
        self.logger = logger
    }

    /// Passes until the task is cancelled.
    public func run() async {
        await pollUntilCancelled(every: interval, logger: logger, failure: "price point refresh failed") { _ = try await runOnce() }
    }

    /// Passes finished so far (failed ones included).
    public var passes: Int { passCount.withLock { $0 } }

    /// One refresh of every catalog product with an `apple_id`.
    @discardableResult
    public func runOnce() async throws -> [PricePointsRefreshSummary] {
        defer { passCount.withLock { $0 += 1 } }
        let summaries = try await service.refreshPricePoints(using: client, metadata: RequestMetadata(actor: "price-point-worker"))
        let refreshed = summaries.filter { if case .refreshed = $0.outcome { true } else { false } }
        logger.info("price points refreshed", metadata: [
            "products": "\(refreshed.count)", "points": "\(refreshed.map(\.pointCount).reduce(0, +))",
            "not_refreshed": "\(summaries.count - refreshed.count)",
        ])
        return summaries
    }
}
