import AppStore
import AppStoreClient
import AppleSimulator
import EventStore
import Foundation
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore
import LedgerWorkers
import Logging
import TestSupport
import Testing

/// Apple's Server API asked per app when a ledger serves several (docs/several-apps.md): the
/// team's key signs a token naming the app (`bid`), and Apple (the simulator, over real HTTP,
/// its JWTs checked) answers about that app's transactions only. Each act, look-up, restore,
/// offer and reconciliation goes to the app of the purchase it is about.
@Suite struct SeveralAppsServerAPITests {
    static let game = LedgerHarness.bundleId
    static let puzzle = SeveralAppsCommandsTests.other
    static let monthly = "com.example.pro.monthly"
    static let gameSupport = "game-support-0123456789"
    static let gameApp = "game-app-only-0123456789"
    static let gameFinance = "game-finance-0123456789"
    static var tokens: String { "\(gameSupport):support@\(game),\(gameApp):app@\(game),\(gameFinance):finance@\(game)" }

    static func with(_ body: (LedgerHarness) async throws -> Void) async throws {
        try await LedgerHarness.with(askApple: true, apps: SeveralAppsCommandsTests.apps, extraTokens: tokens) { ledger in
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            // The harness loads its catalog for the first app; the puzzle sells the same ids.
            _ = try await CatalogStore().load(Data(LedgerHarness.catalog.utf8), bundleId: puzzle, into: log, metadata: RequestMetadata(actor: "test"))
            try await body(ledger)
        }
    }

    /// An order in `app`, Apple's purchase in that app, and its receipt submitted.
    static func buy(_ ledger: LedgerHarness, user: String, product: String, in app: String, appleId: String) async throws -> PurchaseResult {
        let order = try await ledger.post("/v1/orders", ["user_id": user, "product_id": product, "bundle_id": app])
        #expect(order.status == 201, "\(order.json)")
        let token = try #require(order.json["app_account_token"] as? String)
        let purchase = try await ledger.simulator.purchase(
            appleId: appleId, productId: product, environment: .production, appAccountToken: UUID(uuidString: token), bundleId: app)
        let delivered = try await ledger.submit(user: user, purchase: purchase)
        #expect(delivered.outcome == "delivered", "\(delivered.json)")
        return purchase
    }

    /// Apple extends no free trial (4030004): the simulated clock goes past the first week, and
    /// the paid periods are recorded.
    static func pastTheTrial(_ ledger: LedgerHarness) async throws {
        let before = try await ledger.count("SubscriptionRenewalSeen")
        _ = try await ledger.simulator.advance(days: 8)
        try await ledger.eventually("the paid period is recorded") { try await ledger.count("SubscriptionRenewalSeen") > before }
    }

    @Test("Apple answers each app's key about that app alone: the game's client does not know the puzzle's transaction, the puzzle's does")
    func appleAnswersPerApp() async throws {
        try await Self.with { ledger in
            let bought = try await Self.buy(ledger, user: "pa", product: "com.example.removeads", in: Self.puzzle, appleId: "apple-pa")
            let clients = try #require(ledger.server.service.serverAPI)
            #expect(clients.bundleIds == [Self.game, Self.puzzle])
            let game = try #require(clients.client(for: Self.game))
            await #expect(throws: ServerAPIError.self) { _ = try await game.transactionInfo(bought.transactionId, environment: .production) }
            let puzzle = try #require(clients.client(for: Self.puzzle))
            #expect(try await puzzle.transactionInfo(bought.transactionId, environment: .production).value.signedTransactionInfo != nil)
        }
    }

    @Test("support's acts on the puzzle's purchases ask with the puzzle's key: an extension, an app account token, an Apple order look-up")
    func actsAskTheirApp() async throws {
        try await Self.with { ledger in
            let sub = try await Self.buy(ledger, user: "pb", product: Self.monthly, in: Self.puzzle, appleId: "apple-pb")
            let original = sub.transaction.originalTransactionId
            try await Self.pastTheTrial(ledger)
            let extended = try await ledger.post(
                "/v1/subscriptions/\(original)/extend", ["days": 7, "reason": "service_issue", "request_id": "pb-1"], token: LedgerHarness.supportToken)
            #expect(extended.status == 200, "\(extended.json)")
            #expect(ledger.simulator.renewalExtensions.map(\.originalTransactionId) == [original])

            // A token the ledger issued to the same user, with an order in the puzzle.
            let next = try await ledger.post("/v1/orders", ["user_id": "pb", "product_id": "com.example.removeads", "bundle_id": Self.puzzle])
            let token = try #require(next.json["app_account_token"] as? String)
            let set = try await ledger.request(
                .PUT, "/v1/transactions/\(original)/app-account-token", body: #"{"app_account_token":"\#(token)"}"#, token: LedgerHarness.supportToken)
            #expect(set.status == 200, "\(set.json)")
            #expect(try ledger.simulator.transaction(original).appAccountToken?.uuidString.lowercased() == token)

            let order = try await ledger.get("/v1/apple-orders/\(sub.orderId)", token: LedgerHarness.supportToken)
            #expect(order.status == 200, "\(order.json)")
            let transactions = order.json["transactions"] as? [[String: any Sendable]] ?? []
            #expect(transactions.map { $0["bundle_id"] as? String } == [Self.puzzle], "\(order.json)")
            #expect(transactions.map { $0["user_id"] as? String } == ["pb"])
        }
    }

    @Test("a restore by transaction id finds the purchase in whichever app holds it; a token limited to the other app finds nothing")
    func restoreFindsItsApp() async throws {
        try await Self.with { ledger in
            let bought = try await Self.buy(ledger, user: "pc", product: "com.example.removeads", in: Self.puzzle, appleId: "apple-pc")
            let restored = try await ledger.post("/v1/users/pc/restore", ["transaction_id": bought.transactionId])
            #expect(restored.status == 200, "\(restored.json)")
            #expect(restored.outcome == "already_delivered", "\(restored.json)")
            #expect(try await ledger.count("TransactionHistoryRead") == 1)
            let limited = try await ledger.post("/v1/users/pc/restore", ["transaction_id": bought.transactionId], token: Self.gameApp)
            #expect(limited.outcome == "rejected", "the game's key knows no such transaction: \(limited.json)")
            #expect(try await ledger.count("TransactionHistoryRead") == 1)
        }
    }

    @Test("an offer is signed for the app named, and StoreKit redeems it in that app; several apps and none named is refused")
    func offerSignedForItsApp() async throws {
        try await Self.with { ledger in
            let order = try await ledger.post("/v1/orders", ["user_id": "pd", "product_id": Self.monthly, "bundle_id": Self.puzzle])
            let token = try #require(order.json["app_account_token"] as? String)
            let unnamed = try await ledger.post("/v1/offers/signatures", ["user_id": "pd", "product_id": Self.monthly, "kind": "promotional", "offer_id": "W1"])
            #expect(unnamed.status == 400, "\(unnamed.json)")
            let signed = try await ledger.post(
                "/v1/offers/signatures", ["user_id": "pd", "product_id": Self.monthly, "kind": "promotional", "offer_id": "W1", "bundle_id": Self.puzzle])
            #expect(signed.status == 201, "\(signed.json)")
            let signature = try #require(signed.json["signature"] as? String)
            // The game's app cannot redeem the puzzle's offer: the signature names its app.
            await #expect(throws: (any Error).self) {
                _ = try await ledger.simulator.purchase(
                    appleId: "apple-pd", productId: Self.monthly, environment: .production, appAccountToken: UUID(uuidString: token),
                    bundleId: Self.game, offer: .promotionalOfferJWS(signature))
            }
            let redeemed = try await ledger.simulator.purchase(
                appleId: "apple-pd", productId: Self.monthly, environment: .production, appAccountToken: UUID(uuidString: token),
                bundleId: Self.puzzle, offer: .promotionalOfferJWS(signature))
            #expect(redeemed.transaction.bundleId == Self.puzzle)
            let issued = try await ledger.events("OfferSignatureIssued").compactMap { if case .offerSignatureIssued(let s) = $0 { s } else { nil } }
            #expect(issued.map(\.bundleId) == [Self.puzzle])
            let foreign = try await ledger.post(
                "/v1/offers/signatures", ["user_id": "pd", "product_id": Self.monthly, "kind": "promotional", "offer_id": "W1", "bundle_id": Self.puzzle],
                token: Self.gameApp)
            #expect(foreign.status == 403, "\(foreign.json)")
        }
    }

    @Test("a token limited to the game cannot act on the puzzle's purchases: extension, app account token and order look-up answer 404, Apple is not asked")
    func limitedTokensActOnTheirAppAlone() async throws {
        try await Self.with { ledger in
            let sub = try await Self.buy(ledger, user: "pe", product: Self.monthly, in: Self.puzzle, appleId: "apple-pe")
            let original = sub.transaction.originalTransactionId
            let extended = try await ledger.post(
                "/v1/subscriptions/\(original)/extend", ["days": 7, "reason": "service_issue", "request_id": "pe-1"], token: Self.gameSupport)
            #expect(extended.status == 404, "\(extended.json)")
            let set = try await ledger.request(
                .PUT, "/v1/transactions/\(original)/app-account-token", body: #"{"app_account_token":"\#(UUID().uuidString)"}"#, token: Self.gameSupport)
            #expect(set.status == 404, "\(set.json)")
            #expect(ledger.simulator.renewalExtensions.isEmpty)
            #expect(ledger.simulator.appAccountTokensSet == 0)
            let order = try await ledger.get("/v1/apple-orders/\(sub.orderId)", token: Self.gameFinance)
            #expect(order.status == 404, "asked with the game's key alone: \(order.json)")
            // The game's own subscription, to the same token, is acted on.
            let own = try await Self.buy(ledger, user: "pe", product: Self.monthly, in: Self.game, appleId: "apple-pe2")
            try await Self.pastTheTrial(ledger)
            let ownExtended = try await ledger.post(
                "/v1/subscriptions/\(own.transaction.originalTransactionId)/extend", ["days": 7, "reason": "service_issue", "request_id": "pe-2"],
                token: Self.gameSupport)
            #expect(ownExtended.status == 200, "\(ownExtended.json)")
        }
    }

    @Test("reconciliation reads each app's notification history with its key and keeps each app's point; finishing asks each purchase's app")
    func reconcileAndFinishPerApp() async throws {
        try await Self.with { ledger in
            let game = try await Self.buy(ledger, user: "pf", product: "com.example.removeads", in: Self.game, appleId: "apple-pf")
            let puzzle = try await Self.buy(ledger, user: "pf", product: "com.example.removeads", in: Self.puzzle, appleId: "apple-pf2")
            let service = ledger.server.service
            let summaries = try await Reconciler(service: service, clients: try #require(service.serverAPI), logger: Logger(label: "test")).run()
            #expect(Set(summaries.map { "\($0.bundleId) \($0.environment.rawValue)" }) == [
                "\(Self.game) Production", "\(Self.game) Sandbox", "\(Self.puzzle) Production", "\(Self.puzzle) Sandbox",
            ])
            let passes = try await ledger.events("ReconciliationCompleted").compactMap { if case .reconciliationCompleted(let p) = $0 { p } else { nil } }
            #expect(passes.count == 4)
            #expect(Set(passes.compactMap(\.bundleId)) == [Self.game, Self.puzzle])
            // The legacy app keeps its stream's name; the other app has its own.
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            #expect(try await log.read(stream: Streams.reconciliation(environment: "Production")).count == 1)
            #expect(try await log.read(stream: AppStreams(bundleId: Self.puzzle, legacyApp: Self.game).reconciliation(environment: "Production")).count == 1)

            for delivery in try await service.reads.unfinishedDeliveries(after: 0) {
                #expect(try await service.finishWithApple(delivery, metadata: RequestMetadata(actor: "test")))
            }
            let finished = Set(ledger.simulator.finishRequests.map(\.transactionId))
            #expect(finished.isSuperset(of: [game.transactionId, puzzle.transactionId]), "\(finished)")
            let outcomes = try await ledger.events("TransactionFinished").compactMap { if case .transactionFinished(let f) = $0 { f.outcome } else { nil } }
            #expect(outcomes.allSatisfy { $0 == "finished" } && outcomes.count >= 2, "\(outcomes)")
        }
    }
}

/// Apple's price points per app: the same product id in two apps is two products with Apple IDs
/// of their own, each refreshed and pricing its own app's sales.
@Suite struct SeveralAppsPricePointsTests {
    static let game = LedgerHarness.bundleId
    static let puzzle = SeveralAppsCommandsTests.other
    static let coins = "com.example.coins100"

    @Test("each app's catalog is refreshed with its own Apple IDs, recorded per app, and each app's sale is priced by its own points")
    func pricePointsPerApp() async throws {
        try await LedgerHarness.with(askApple: true, askConnect: true, apps: SeveralAppsCommandsTests.apps) { ledger in
            let product = try #require(ledger.simulator.configuration.products.first { $0.productId == Self.coins })
            let ids = [Self.game: product.reportAppleIdentifier, Self.puzzle: product.reportAppleIdentifier(inApp: Self.puzzle, primaryApp: Self.game)]
            #expect(ids[Self.game] != ids[Self.puzzle])
            for (app, appleId) in ids {
                let catalog = #"{"products": [{"product_id": "\#(Self.coins)", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD", "apple_id": "\#(appleId)"}]}"#
                _ = try await ledger.server.service.loadCatalog(Data(catalog.utf8), bundleId: app, metadata: RequestMetadata(actor: "test"))
            }
            let summaries = try await PricePointTests.refresh(ledger)
            let refreshedApps = summaries.filter { if case .refreshed = $0.outcome { true } else { false } }.map(\.bundleId)
            #expect(refreshedApps == [Self.game, Self.puzzle], "app by app, as configured")
            let events = try await PricePointTests.refreshed(ledger)
            #expect(Dictionary(uniqueKeysWithValues: events.map { ($0.bundleId ?? "", $0.appleId) }) == ids)
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            #expect(try await log.read(stream: Streams.pricePoints(Self.coins)).count == 1, "the first app keeps its stream's name")
            #expect(try await log.read(stream: AppStreams(bundleId: Self.puzzle, legacyApp: Self.game).pricePoints(productId: Self.coins)).count == 1)

            // A signed sale in each app, in the US: each priced by its app's points (0.99 pays 0.70).
            for (app, appleId) in [(Self.game, "apple-pp1"), (Self.puzzle, "apple-pp2")] {
                let order = try await ledger.post("/v1/orders", ["user_id": "pp", "product_id": Self.coins, "bundle_id": app])
                let token = try #require(order.json["app_account_token"] as? String)
                let purchase = try await ledger.simulator.purchase(
                    appleId: appleId, productId: Self.coins, environment: .production, appAccountToken: UUID(uuidString: token), bundleId: app,
                    storefront: "USA")
                let delivered = try await ledger.post("/v1/transactions", ["user_id": "pp", "signed_transaction": purchase.signedTransaction])
                #expect(delivered.outcome == "delivered", "\(delivered.json)")
            }
            let revenue = try await ledger.get("/v1/reports/revenue?from=2000-01-01&to=2100-12-31&group_by=app", token: LedgerHarness.financeToken)
            let rows = revenue.json["rows"] as? [[String: any Sendable]] ?? []
            #expect(Set(rows.compactMap { $0["bundle_id"] as? String }) == [Self.game, Self.puzzle], "\(revenue.json)")
            #expect(rows.allSatisfy { $0["proceeds_estimated"] as? Bool == false }, "priced by Apple's points: \(rows)")
            #expect(rows.map { $0["proceeds_minor"] as? Int } == [70, 70], "\(rows)")
            let points = try await ledger.pool.withConnection { connection in
                try connection.query("SELECT bundle_id, count(*) FROM projection_revenue_app_price_points GROUP BY 1 ORDER BY 1")
                    .map { (try $0.decode(0, as: String.self), try $0.decode(1, as: Int64.self)) }
            }
            #expect(Set(points.map(\.0)) == [Self.game, Self.puzzle])
        }
    }

    @Test("end to end over two apps, from the order to the reconciled report: Apple's financial report agrees per app, and the console filters its cells by app")
    func reconciledReportPerApp() async throws {
        try await LedgerHarness.with(askApple: true, askConnect: true, apps: SeveralAppsCommandsTests.apps) { ledger in
            let product = try #require(ledger.simulator.configuration.products.first { $0.productId == Self.coins })
            for (app, appleId) in [(Self.game, product.reportAppleIdentifier), (Self.puzzle, product.reportAppleIdentifier(inApp: Self.puzzle, primaryApp: Self.game))] {
                let catalog = #"{"products": [{"product_id": "\#(Self.coins)", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD", "apple_id": "\#(appleId)"}]}"#
                _ = try await ledger.server.service.loadCatalog(Data(catalog.utf8), bundleId: app, metadata: RequestMetadata(actor: "test"))
            }
            _ = try await PricePointTests.refresh(ledger)
            // Two packs in the game, one in the puzzle: the same product id, two products.
            for (app, appleId) in [(Self.game, "apple-r1"), (Self.game, "apple-r2"), (Self.puzzle, "apple-r3")] {
                let order = try await ledger.post("/v1/orders", ["user_id": appleId, "product_id": Self.coins, "bundle_id": app])
                let token = try #require(order.json["app_account_token"] as? String)
                let purchase = try await ledger.simulator.purchase(
                    appleId: appleId, productId: Self.coins, environment: .production, appAccountToken: UUID(uuidString: token), bundleId: app,
                    storefront: "USA")
                #expect(try await ledger.post("/v1/transactions", ["user_id": appleId, "signed_transaction": purchase.signedTransaction]).outcome == "delivered")
            }
            let now = ledger.server.service.clock()
            let text = try ledger.simulator.financialReport(from: PacificDay.of(now - 86_400_000), to: PacificDay.of(now + 86_400_000))
            let imported = try await ReportImporter(store: ledger.server.service.log.store).importReport(
                Array(text.utf8), fileName: "financial.txt", metadata: RequestMetadata(actor: "test"))
            let result = try #require(await ledger.server.reads.reconciliation(ofReport: imported.report.documentSha256)).result
            #expect(result.agrees, "\(result.differences)")
            #expect(result.otherApps.isEmpty, "each line is a served app's: \(result.otherApps)")
            #expect(result.cells.map(\.cell.bundleId).sorted() == [Self.puzzle, Self.game].sorted(), "\(result.cells)")

            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            let every = try await browser.get("/console/reconciliation/\(imported.report.documentSha256)")
            #expect(every.body.contains(">2 cells compared"), "\(every.body)")
            let one = try await browser.get("/console/reconciliation/\(imported.report.documentSha256)?bundle_id=\(Self.puzzle)")
            #expect(one.status == 200)
            #expect(one.body.contains("\(Self.puzzle): 1 cells compared"), "\(one.body)")
            #expect(try await browser.get("/console/reconciliation/\(imported.report.documentSha256)?bundle_id=com.acme.unknown").status == 400)
        }
    }
}
