import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Postgres
import TestSupport
import Testing

/// Read models say which app each row belongs to (docs/several-apps.md): balances per app and
/// unit, entitlements, ownership and subscriptions naming their app; rows of a log recorded
/// before several apps read as its legacy app, as the log names it.
@Suite struct AppsReadModelTests {
    static let other = "com.acme.puzzle"

    /// A consumable and a non-consumable delivered to `user` in `app` (nil: as the previous
    /// release recorded them, naming no app), as the decider appends them.
    static func purchases(of user: String, app: String?, prefix: String, coins: Int64, priceMilliunits: Int64? = 990) -> [LedgerAppend] {
        func delivered(_ id: String, _ product: String, _ kind: ProductKind, grants: [String: Int64]) -> PurchaseDelivered {
            PurchaseDelivered(
                transactionId: id, originalTransactionId: id, productId: product, kind: kind, quantity: 1, userId: user, orderId: nil,
                environment: "Production", purchaseDateMs: 1_700_000_000_000, expiresDateMs: nil, priceMilliunits: priceMilliunits,
                currency: priceMilliunits == nil ? nil : "USD", appAccountToken: nil, appTransactionId: nil, isTrial: false, grants: grants,
                submissionId: "sub-\(id)", match: .appAccountToken,
                bundleId: app)
        }
        let coinsId = "\(prefix)-coins", removeAdsId = "\(prefix)-removeads"
        return [
            LedgerAppend(stream: Streams.transaction(coinsId), expectation: .noStream, events: [
                .purchaseDelivered(delivered(coinsId, "com.example.coins100", .consumable, grants: ["coins": coins])),
            ]),
            LedgerAppend(stream: Streams.transaction(removeAdsId), expectation: .noStream, events: [
                .purchaseDelivered(delivered(removeAdsId, "com.example.removeads", .nonConsumable, grants: [:])),
            ]),
            LedgerAppend(stream: Streams.ownership(removeAdsId), expectation: .noStream, events: [
                .ownershipClaimed(OwnershipClaimed(
                    originalTransactionId: removeAdsId, productId: "com.example.removeads", kind: .nonConsumable, userId: user,
                    transactionId: removeAdsId, environment: "Production", bundleId: app)),
            ]),
        ]
    }

    static func apps(_ answer: LedgerHarness.Answer) -> [String: [String: any Sendable]] {
        var apps: [String: [String: any Sendable]] = [:]
        for app in answer.json["apps"] as? [[String: any Sendable]] ?? [] { apps[app["bundle_id"] as? String ?? "?"] = app }
        return apps
    }

    static func coins(_ object: [String: any Sendable]?) -> Int? { (object?["balances"] as? [String: any Sendable])?["coins"] as? Int }

    @Test("a log recorded before several apps reads as the app it was recorded for, rows written before the column included")
    func legacyLogReadsAsItsApp() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            let log = LedgerLog(store: EventStore(pool: pool, logger: TestDatabase.logger))
            try await log.append(Self.purchases(of: "alice", app: nil, prefix: "old", coins: 100), metadata: RequestMetadata(actor: "test"))
            try await LedgerHarness.with(database: conninfo) { ledger in
                let user = try await ledger.get("/v1/users/alice")
                #expect(user.status == 200)
                #expect(Self.coins(user.json) == 100, "the one app served is in scope")
                let apps = Self.apps(user)
                #expect(Array(apps.keys) == [LedgerHarness.bundleId])
                #expect(Self.coins(apps[LedgerHarness.bundleId]) == 100)
                let entitlements = user.json["entitlements"] as? [[String: any Sendable]] ?? []
                #expect(entitlements.map { $0["bundle_id"] as? String } == [LedgerHarness.bundleId])

                // The runner wrote the legacy app, not NULL.
                let stored: [String?] = try await ledger.pool.withConnection { connection in
                    try connection.query("""
                        SELECT bundle_id FROM projection_entitlements UNION ALL SELECT bundle_id FROM projection_ownership
                        UNION ALL SELECT bundle_id FROM projection_app_balances
                        """).map { try $0.decode(0) }
                }
                #expect(stored == [String?](repeating: LedgerHarness.bundleId, count: 4))
                // Webhook bodies name it too: the runner reads such events as the legacy app's.
                let bodies: [String] = try await ledger.pool.withConnection { connection in
                    try connection.query("SELECT body FROM projection_webhook_events ORDER BY position, sequence").map { try $0.decode(0) }
                }
                #expect(!bodies.isEmpty)
                #expect(bodies.allSatisfy { $0.contains("\"bundle_id\":\"\(LedgerHarness.bundleId)\"") }, "\(bodies)")

                // A row the previous release wrote has no app: it reads as the legacy app too.
                try await ledger.pool.withConnection { connection in
                    _ = try connection.execute("UPDATE projection_entitlements SET bundle_id = NULL")
                    _ = try connection.execute("UPDATE projection_ownership SET bundle_id = NULL")
                }
                let again = try await ledger.get("/v1/users/alice")
                #expect((again.json["entitlements"] as? [[String: any Sendable]] ?? []).map { $0["bundle_id"] as? String } == [LedgerHarness.bundleId])
                let ownership = try await ledger.get("/v1/ownership/old-removeads")
                #expect(ownership.json["bundle_id"] as? String == LedgerHarness.bundleId)
            }
        }
    }

    @Test("the same user's coins and the same product id in two apps are two balances and two entitlements, each under its app")
    func sameUserInTwoApps() async throws {
        try await LedgerHarness.with { ledger in
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            try await log.append(
                Self.purchases(of: "alice", app: LedgerHarness.bundleId, prefix: "game", coins: 100)
                    + Self.purchases(of: "alice", app: Self.other, prefix: "puzzle", coins: 300),
                metadata: RequestMetadata(actor: "test"))
            let user = try await ledger.get("/v1/users/alice")
            #expect(user.status == 200)
            // Only the served app is in scope: another app's coins are not added to its own.
            #expect(Self.coins(user.json) == 100)
            #expect((user.json["entitlements"] as? [[String: any Sendable]] ?? []).map { $0["original_transaction_id"] as? String } == ["game-removeads"])
            let apps = Self.apps(user)
            #expect(Set(apps.keys) == [LedgerHarness.bundleId, Self.other])
            #expect(Self.coins(apps[Self.other]) == 300)
            let puzzle = apps[Self.other]?["entitlements"] as? [[String: any Sendable]] ?? []
            #expect(puzzle.map { $0["product_id"] as? String } == ["com.example.removeads"])
            #expect(puzzle.map { $0["bundle_id"] as? String } == [Self.other])
            #expect(try await ledger.get("/v1/ownership/puzzle-removeads").json["bundle_id"] as? String == Self.other)

            // An app this ledger does not serve is not a scope.
            let unserved = try await ledger.get("/v1/users/alice?bundle_id=\(Self.other)")
            #expect(unserved.status == 400)
            #expect(unserved.errorCode == "invalid_request")
            let named = try await ledger.get("/v1/users/alice?bundle_id=\(LedgerHarness.bundleId)")
            #expect(Self.coins(named.json) == 100)
        }
    }

    @Test("another app's catalog selling the same product id changes nothing this app delivers or accepts")
    func sameProductIdInAnotherAppsCatalog() async throws {
        try await LedgerHarness.with { ledger in
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            let other = #"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 999}},"#
                + #" {"product_id": "com.acme.puzzle.hints", "kind": "consumable", "grants": {"hints": 5}}]}"#
            _ = try await CatalogStore().load(Data(other.utf8), bundleId: Self.other, into: log, metadata: RequestMetadata(actor: "test"))
            let (_, purchase) = try await ledger.orderAndBuy(user: "bea", product: "com.example.coins100", appleId: "apple-bea")
            #expect(try await ledger.submit(user: "bea", purchase: purchase).status == 200)
            let user = try await ledger.get("/v1/users/bea")
            #expect(Self.coins(user.json) == 100, "this app's catalog grants 100, not the other app's 999")
            // A product only the other app sells is not this app's.
            let order = try await ledger.post("/v1/orders", ["user_id": "bea", "product_id": "com.acme.puzzle.hints"])
            #expect(order.status == 404, "\(order.status) \(order.json)")
            #expect(order.errorCode == "unknown_product")
        }
    }

    @Test("revenue by app: every row is one app's, group_by=app and bundle_id= split them, each app's catalog prices its own sales")
    func revenueByApp() async throws {
        try await LedgerHarness.with { ledger in
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            let other = #"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "price_minor": 500, "currency": "USD"},"#
                + #" {"product_id": "com.example.removeads", "kind": "non_consumable", "price_minor": 700, "currency": "USD"}]}"#
            _ = try await CatalogStore().load(Data(other.utf8), bundleId: Self.other, into: log, metadata: RequestMetadata(actor: "test"))
            // Apple priced this app's sales (0.99 each); the other app's are priced by its own catalog.
            try await log.append(
                Self.purchases(of: "alice", app: LedgerHarness.bundleId, prefix: "game", coins: 100)
                    + Self.purchases(of: "alice", app: Self.other, prefix: "puzzle", coins: 300, priceMilliunits: nil),
                metadata: RequestMetadata(actor: "test"))
            func rows(_ query: String) async throws -> [[String: any Sendable]] {
                let answer = try await ledger.get("/v1/reports/revenue?from=2023-11-01&to=2023-11-30&\(query)", token: LedgerHarness.financeToken)
                #expect(answer.status == 200, "\(answer.json)")
                return answer.json["rows"] as? [[String: any Sendable]] ?? []
            }
            let byApp = try await rows("group_by=app")
            // In bundle id order.
            #expect(byApp.map { $0["key"] as? String } == [Self.other, LedgerHarness.bundleId])
            #expect(byApp.map { $0["bundle_id"] as? String } == [Self.other, LedgerHarness.bundleId])
            #expect(byApp.map { $0["gross_minor"] as? Int } == [1_200, 198], "the same product ids, priced by the other app's catalog and by Apple")
            #expect(byApp.map { $0["purchases"] as? Int } == [2, 2])

            let byDay = try await rows("group_by=day")
            #expect(byDay.map { $0["key"] as? String } == ["2023-11-14", "2023-11-14"], "a day on which two apps sold has a row for each")
            #expect(byDay.map { $0["bundle_id"] as? String } == [Self.other, LedgerHarness.bundleId])

            let one = try await rows("group_by=product&bundle_id=\(LedgerHarness.bundleId)")
            #expect(one.map { $0["gross_minor"] as? Int } == [99, 99])
            let unserved = try await ledger.get(
                "/v1/reports/revenue?from=2023-11-01&to=2023-11-30&bundle_id=com.acme.unknown", token: LedgerHarness.financeToken)
            #expect(unserved.status == 400)
            #expect(unserved.errorCode == "invalid_request")
        }
    }
}
