import AppStoreClient
import AppleSimulator
import Crypto
import Foundation
import Ledger
import LedgerService
import LedgerStore
import LedgerWorkers
import Logging
import Testing

/// The ledger reads Apple's price points from the App Store Connect API over real HTTP, the
/// simulator checking every JWT (ES256, `aud` appstoreconnect-v1, no `bid`) against the public
/// half of a key pair made for the test, and records them: pages verbatim, points exact.
@Suite("Price points")
struct PricePointTests {
    /// A product the catalog gives no `apple_id`: reported as skipped.
    static let withoutAppleId = "com.example.gift"

    /// The simulator's products with their Apple ids, and one without.
    static func catalog(_ ledger: LedgerHarness) throws -> Data {
        var products: [[String: Any]] = ledger.simulator.configuration.products.map {
            ["product_id": $0.productId, "kind": $0.kind.rawValue, "apple_id": $0.reportAppleIdentifier]
        }
        products.append(["product_id": withoutAppleId, "kind": "consumable"])
        return try JSONSerialization.data(withJSONObject: ["products": products])
    }

    static func refreshed(_ ledger: LedgerHarness) async throws -> [PricePointsRefreshed] {
        try await ledger.events(PricePointsRefreshed.eventType).compactMap {
            if case .pricePointsRefreshed(let event) = $0 { event } else { nil }
        }
    }

    static func refresh(_ ledger: LedgerHarness) async throws -> [PricePointsRefreshSummary] {
        let configuration = try #require(ledger.appStoreConnect)
        let client = try await AppStoreConnectClient(configuration: configuration, clock: .system, logger: Logger(label: "test"))
        return try await ledger.server.service.refreshPricePoints(using: client, metadata: RequestMetadata(actor: "test"))
    }

    @Test("a refresh records one PricePointsRefreshed per product with an apple_id, its pages verbatim, US 0.99 paying 0.70")
    func refreshRecordsEveryProduct() async throws {
        try await LedgerHarness.with(askConnect: true) { ledger in
            _ = try await ledger.server.service.loadCatalog(try Self.catalog(ledger), metadata: RequestMetadata(actor: "test"))
            let simulated = ledger.simulator.configuration.products
            let summaries = try await Self.refresh(ledger)
            #expect(summaries.count == simulated.count + 1)
            #expect(summaries.first { $0.productId == Self.withoutAppleId }?.outcome == .skippedWithoutAppleId)
            let events = try await Self.refreshed(ledger)
            #expect(events.count == simulated.count, "one per product with an apple_id: \(summaries)")
            #expect(Set(events.map(\.productId)) == Set(simulated.map(\.productId)))

            for product in simulated {
                let event = try #require(events.first { $0.productId == product.productId })
                #expect(event.appleId == product.reportAppleIdentifier)
                #expect(event.kind == (product.kind == .autoRenewable ? "subscription" : "in_app"))
                #expect(Set(event.points.map(\.territory)) == ["USA", "DEU", "GBR", "JPN", "FRA", "BRA"])
                #expect(event.points.allSatisfy { $0.customerPriceMinor != nil && $0.proceedsMinor != nil })
                #expect(event.points.allSatisfy { ($0.proceedsYear2Minor != nil) == (product.kind == .autoRenewable) })
                let currencies = Dictionary(event.points.map { ($0.territory, $0.currency) }, uniquingKeysWith: { first, _ in first })
                #expect(currencies == ["USA": "USD", "DEU": "EUR", "GBR": "GBP", "JPN": "JPY", "FRA": "EUR", "BRA": "BRL"])
                let us099 = try #require(event.points.first { $0.territory == "USA" && $0.customerPriceMinor == 99 })
                #expect(us099.proceedsMinor == 70, "US 0.99 USD pays 0.70")
                #expect(event.points.contains { $0.territory == "JPN" && $0.customerPriceMinor == 160 }, "JPY has no minor digits: 160.0 is 160")

                // Pages of 10 (the harness's page size): every page kept, byte for byte, and
                // together they hold exactly the points recorded.
                #expect(event.documentSha256List.count == (event.points.count + 9) / 10)
                var ids: [String] = []
                for name in event.documentSha256List {
                    let bytes = try #require(try await ledger.server.service.documents.get(name), "document \(name) is stored")
                    #expect(SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() == name)
                    let page = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
                    ids += (page["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                }
                #expect(ids.count == event.points.count)
                #expect(Set(ids).count == ids.count, "no page read twice")
            }
        }
    }

    @Test("each refresh appends a new event to the product's stream")
    func refreshAgainAppends() async throws {
        try await LedgerHarness.with(askConnect: true) { ledger in
            _ = try await ledger.server.service.loadCatalog(try Self.catalog(ledger), metadata: RequestMetadata(actor: "test"))
            _ = try await Self.refresh(ledger)
            _ = try await Self.refresh(ledger)
            let count = ledger.simulator.configuration.products.count
            #expect(try await ledger.count(PricePointsRefreshed.eventType) == Int64(2 * count))
            let versions: Int64 = try await ledger.pool.withConnection {
                try $0.query("SELECT max(stream_version) FROM events WHERE stream_id = \(Streams.pricePoints("com.example.coins100"))")[0].decode(0)
            }
            #expect(versions == 2)
        }
    }

    @Test("the price point worker refreshes at start, then waits its interval")
    func workerRefreshesAtStart() async throws {
        try await LedgerHarness.with(askConnect: true) { ledger in
            _ = try await ledger.server.service.loadCatalog(try Self.catalog(ledger), metadata: RequestMetadata(actor: "test"))
            let configuration = try #require(ledger.appStoreConnect)
            let client = try await AppStoreConnectClient(configuration: configuration, clock: .system, logger: Logger(label: "test"))
            let worker = PricePointWorker(service: ledger.server.service, client: client, interval: .seconds(3600), logger: Logger(label: "test"))
            let task = Task { await worker.run() }
            defer { task.cancel() }
            let count = Int64(ledger.simulator.configuration.products.count)
            // A pass is some twenty signed, paged requests to the simulator: on a loaded CI machine
            // a whole pass took up to a minute, so the deadline is two.
            try await ledger.eventually("the first pass records every product", within: .seconds(120)) {
                try await ledger.count(PricePointsRefreshed.eventType) == count
            }
            task.cancel()
            await task.value
            #expect(worker.passes == 1)
            #expect(try await ledger.count(PricePointsRefreshed.eventType) == count, "no second pass within the interval")
        }
    }

    @Test("a key App Store Connect does not know is refused (401): an error, nothing recorded")
    func unauthorizedKey() async throws {
        try await LedgerHarness.with(askConnect: true) { ledger in
            _ = try await ledger.server.service.loadCatalog(try Self.catalog(ledger), metadata: RequestMetadata(actor: "test"))
            var wrong = try #require(ledger.appStoreConnect)
            wrong.privateKeyPEM = P256.Signing.PrivateKey().pemRepresentation
            let client = try await AppStoreConnectClient(configuration: wrong, clock: .system, logger: Logger(label: "test"))
            await #expect(throws: AppStoreConnectError.self) {
                _ = try await ledger.server.service.refreshPricePoints(using: client, metadata: RequestMetadata(actor: "test"))
            }
            #expect(try await ledger.count(PricePointsRefreshed.eventType) == 0)
        }
    }
}
