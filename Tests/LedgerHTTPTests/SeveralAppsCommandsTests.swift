import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import TestSupport
import Testing

/// Orders, spends and consents name their app when a ledger serves several, and a token limited
/// to one app (`token:app@BUNDLE_ID`) acts on and reads that app alone (docs/several-apps.md).
@Suite struct SeveralAppsCommandsTests {
    static let other = "com.acme.puzzle"
    static let apps: LedgerApps = {
        do {
            return try LedgerApps([AppSettings(bundleId: LedgerHarness.bundleId), AppSettings(bundleId: other)])
        } catch {
            preconditionFailure("two distinct apps: \(error)")
        }
    }()
    static let thisAppToken = "this-app-only-0123456789"
    static let otherAppToken = "other-app-only-0123456789"
    static let otherFinanceToken = "other-finance-0123456789"
    static var tokens: String {
        "\(thisAppToken):app@\(LedgerHarness.bundleId),\(otherAppToken):app@\(other),\(otherFinanceToken):finance@\(other)"
    }

    static func with(_ body: (LedgerHarness) async throws -> Void) async throws {
        try await LedgerHarness.with(apps: apps, extraTokens: tokens) { ledger in
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            // The harness loads its catalog for the first app; the other sells the same product ids.
            _ = try await CatalogStore().load(Data(LedgerHarness.catalog.utf8), bundleId: other, into: log, metadata: RequestMetadata(actor: "test"))
            try await log.append(
                AppsReadModelTests.purchases(of: "alice", app: LedgerHarness.bundleId, prefix: "game", coins: 100)
                    + AppsReadModelTests.purchases(of: "alice", app: other, prefix: "puzzle", coins: 300),
                metadata: RequestMetadata(actor: "test"))
            try await body(ledger)
        }
    }

    @Test("with several apps, an order names its app: none named is refused, an app not served too, each app's catalog decides")
    func ordersNameTheirApp() async throws {
        try await Self.with { ledger in
            let unnamed = try await ledger.post("/v1/orders", ["user_id": "alice", "product_id": "com.example.coins100"])
            #expect(unnamed.status == 400)
            #expect(unnamed.errorCode == "invalid_request")
            let unserved = try await ledger.post("/v1/orders", ["user_id": "alice", "product_id": "com.example.coins100", "bundle_id": "com.acme.x"])
            #expect(unserved.status == 400)
            let named = try await ledger.post("/v1/orders", ["user_id": "alice", "product_id": "com.example.coins100", "bundle_id": Self.other])
            #expect(named.status == 201, "\(named.json)")
            #expect(named.json["bundle_id"] as? String == Self.other)
            // A limited token needs no bundle_id, and may not name another app.
            let limited = try await ledger.post("/v1/orders", ["user_id": "alice", "product_id": "com.example.coins100"], token: Self.thisAppToken)
            #expect(limited.json["bundle_id"] as? String == LedgerHarness.bundleId)
            let across = try await ledger.post(
                "/v1/orders", ["user_id": "alice", "product_id": "com.example.coins100", "bundle_id": Self.other], token: Self.thisAppToken)
            #expect(across.status == 403)
            #expect(across.errorCode == "app_not_allowed")
        }
    }

    @Test("spends come out of their app's coins only, from that app's wallet, and one spend_id may be used in each app")
    func spendsPerApp() async throws {
        try await Self.with { ledger in
            let inOther = try await ledger.post(
                "/v1/users/alice/spend", ["unit": "coins", "amount": 250, "spend_id": "s-1", "bundle_id": Self.other])
            #expect(inOther.status == 200, "\(inOther.json)")
            #expect(inOther.json["balance"] as? Int == 50)
            // The same spend_id in this app is another spend; 250 is more than this app's 100.
            let tooMuch = try await ledger.post("/v1/users/alice/spend", ["unit": "coins", "amount": 250, "spend_id": "s-1"], token: Self.thisAppToken)
            #expect(tooMuch.status == 409)
            #expect(tooMuch.errorCode == "insufficient_balance")
            let inThis = try await ledger.post("/v1/users/alice/spend", ["unit": "coins", "amount": 60, "spend_id": "s-1"], token: Self.thisAppToken)
            #expect(inThis.status == 200, "\(inThis.json)")
            #expect(inThis.json["balance"] as? Int == 40)
            let streams = try await ledger.pool.withConnection { connection in
                try connection.query("SELECT stream_id FROM events WHERE event_type = 'BalanceSpent' ORDER BY position").map { try $0.decode(0, as: String.self) }
            }
            // The first app of a log begun with several keeps the names spends always had.
            #expect(streams == ["wallet \(Self.other) 5:coins:alice", "wallet-5:coins:alice"])
            let user = try await ledger.get("/v1/users/alice")
            var coins: [String: Int] = [:]
            for app in user.json["apps"] as? [[String: any Sendable]] ?? [] {
                coins[app["bundle_id"] as? String ?? "?"] = (app["balances"] as? [String: any Sendable])?["coins"] as? Int
            }
            #expect(coins == [LedgerHarness.bundleId: 40, Self.other: 50])
        }
    }

    @Test("a token limited to one app sees that app alone: the other's balances are left out and its purchases answer 404")
    func limitedTokenReadsItsAppAlone() async throws {
        try await Self.with { ledger in
            let user = try await ledger.get("/v1/users/alice", token: Self.thisAppToken)
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
            #expect((user.json["apps"] as? [[String: any Sendable]] ?? []).map { $0["bundle_id"] as? String } == [LedgerHarness.bundleId])
            let acrossRead = try await ledger.get("/v1/users/alice?bundle_id=\(Self.other)", token: Self.thisAppToken)
            #expect(acrossRead.errorCode == "app_not_allowed")
            #expect(try await ledger.get("/v1/ownership/puzzle-removeads", token: Self.thisAppToken).status == 404)
            #expect(try await ledger.get("/v1/ownership/game-removeads", token: Self.thisAppToken).status == 200)
            #expect(try await ledger.get("/v1/ownership/puzzle-removeads").status == 200, "an unlimited token sees both")
            // A person's timeline spans their apps: refused to a limited token. A purchase's is
            // its app's: read by that app's token, not found by another's.
            let timeline = try await ledger.get("/v1/timelines/users/alice", token: Self.otherFinanceToken)
            #expect(timeline.status == 403)
            #expect(timeline.errorCode == "app_not_allowed")
            let own = try await ledger.get("/v1/timelines/transactions/puzzle-removeads", token: Self.otherFinanceToken)
            #expect(own.status == 200, "\(own.json)")
            #expect(try await ledger.get("/v1/timelines/transactions/game-removeads", token: Self.otherFinanceToken).status == 404)
            #expect(try await ledger.get("/v1/timelines/transactions/game-removeads", token: LedgerHarness.financeToken).status == 200)
            // Finance limited to the other app reads that app's revenue only.
            let revenue = try await ledger.get("/v1/reports/revenue?from=2023-11-01&to=2023-11-30&group_by=app", token: Self.otherFinanceToken)
            #expect((revenue.json["rows"] as? [[String: any Sendable]] ?? []).map { $0["bundle_id"] as? String } == [Self.other])
        }
    }

    @Test("the feed read with a token limited to one app holds that app's messages alone; an unlimited token reads both apps'")
    func feedPerApp() async throws {
        try await Self.with { ledger in
            func apps(_ token: String) async throws -> [String?] {
                let page = try await ledger.get("/v1/events?after=0&limit=1000", token: token)
                #expect(page.status == 200, "\(page.json)")
                return (page.json["events"] as? [[String: any Sendable]] ?? []).map { ($0["data"] as? [String: any Sendable])?["bundle_id"] as? String }
            }
            let all = try await apps(LedgerHarness.appToken)
            #expect(Set(all) == [LedgerHarness.bundleId, Self.other], "\(all)")
            let other = try await apps(Self.otherAppToken)
            #expect(!other.isEmpty && other.allSatisfy { $0 == Self.other }, "\(other)")
            let this = try await apps(Self.thisAppToken)
            #expect(!this.isEmpty && this.allSatisfy { $0 == LedgerHarness.bundleId }, "\(this)")
            #expect(this.count + other.count == all.count)
            // `next` is the last message of the app's page: reading on from it finds no more.
            let page = try await ledger.get("/v1/events?after=0&limit=1000", token: Self.otherAppToken)
            let next = try #require(page.json["next"] as? Int)
            let rest = try await ledger.get("/v1/events?after=\(next)&limit=1000", token: Self.otherAppToken)
            #expect((rest.json["events"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("a receipt of one app submitted with a token limited to another is refused and delivers nothing")
    func limitedTokenRefusesAnotherAppsReceipt() async throws {
        try await LedgerHarness.with(apps: Self.apps, extraTokens: Self.tokens) { ledger in
            let purchase = try await ledger.simulator.purchase(appleId: "apple-fa", productId: "com.example.coins100", environment: .production)
            let refused = try await ledger.post(
                "/v1/receipts", ["user_id": "fa", "receipt_data": purchase.receiptData], token: Self.otherAppToken)
            #expect(refused.status == 422, "\(refused.json)")
            #expect(refused.errorCode == "bundle_id_mismatch")
            let signed = try await ledger.post(
                "/v1/transactions", ["user_id": "fa", "signed_transaction": purchase.signedTransaction], token: Self.otherAppToken)
            #expect(signed.errorCode == "bundle_id_mismatch", "\(signed.json)")
            #expect(try await ledger.count(PurchaseDelivered.eventType) == 0)
            // The same receipt with this app's token is delivered.
            let delivered = try await ledger.post(
                "/v1/receipts", ["user_id": "fa", "receipt_data": purchase.receiptData], token: Self.thisAppToken)
            #expect(delivered.status == 200, "\(delivered.json)")
        }
    }

    @Test("end to end: the same user buys the same product id in two apps through orders and Apple's receipts; each app delivers its own grant")
    func sameUserSameProductTwoApps() async throws {
        try await LedgerHarness.with(apps: Self.apps, extraTokens: Self.tokens) { ledger in
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            // The puzzle's coins100 grants 300 coins: the same product id, another product.
            let puzzle = LedgerHarness.catalog.replacingOccurrences(of: #""grants": {"coins": 100}"#, with: #""grants": {"coins": 300}"#)
            _ = try await CatalogStore().load(Data(puzzle.utf8), bundleId: Self.other, into: log, metadata: RequestMetadata(actor: "test"))
            for (app, appleId) in [(LedgerHarness.bundleId, "apple-gi-game"), (Self.other, "apple-gi-puzzle")] {
                let order = try await ledger.post("/v1/orders", ["user_id": "gi", "product_id": "com.example.coins100", "bundle_id": app])
                #expect(order.status == 201, "\(order.json)")
                let token = try #require(order.json["app_account_token"] as? String)
                let purchase = try await ledger.simulator.purchase(
                    appleId: appleId, productId: "com.example.coins100", environment: .production, appAccountToken: UUID(uuidString: token),
                    bundleId: app)
                let answer = try await ledger.submit(user: "gi", purchase: purchase)
                #expect(answer.status == 200, "\(answer.json)")
                #expect(answer.deliveries.map { $0["order_id"] as? String } == [order.json["order_id"] as? String], "its own app's order")
            }
            let user = try await ledger.get("/v1/users/gi")
            var coins: [String: Int] = [:]
            for app in user.json["apps"] as? [[String: any Sendable]] ?? [] {
                coins[app["bundle_id"] as? String ?? "?"] = (app["balances"] as? [String: any Sendable])?["coins"] as? Int
            }
            #expect(coins == [LedgerHarness.bundleId: 100, Self.other: 300])
            let revenue = try await ledger.get(
                "/v1/reports/revenue?from=2000-01-01&to=2100-12-31&group_by=app", token: LedgerHarness.financeToken)
            #expect((revenue.json["rows"] as? [[String: any Sendable]] ?? []).map { $0["purchases"] as? Int } == [1, 1])
        }
    }

    @Test("an import's transaction record names its app when several are served; one naming none or an unserved app is refused by line")
    func importNamesItsApp() async throws {
        try await Self.with { ledger in
            try await TemporaryFolder.with("import-apps") { folder in
                let lines = [
                    #"{"user_id": "hu", "transaction": {"transaction_id": "7100000001", "product_id": "com.example.coins100", "purchase_date_ms": 1700000000000, "bundle_id": "\#(Self.other)"}}"#,
                    #"{"user_id": "hu", "transaction": {"transaction_id": "7100000002", "product_id": "com.example.coins100", "purchase_date_ms": 1700000000000}}"#,
                    #"{"user_id": "hu", "transaction": {"transaction_id": "7100000003", "product_id": "com.example.coins100", "purchase_date_ms": 1700000000000, "bundle_id": "com.acme.unserved"}}"#,
                ]
                let file = folder.appendingPathComponent("history.jsonl")
                try Data(lines.joined(separator: "\n").utf8).write(to: file)
                let summary = try await HistoryImport(
                    pool: ledger.pool, configuration: ledger.server.service.configuration, clock: ledger.server.service.clock,
                    logger: TestDatabase.logger
                ).run(file: file)
                #expect(summary.imported == 1)
                let errors = summary.errors.map { "\($0.line): \($0.message)" }
                #expect(errors.count == 2, "\(errors)")
                #expect(errors.first?.hasPrefix("2: transaction.bundle_id is required") == true, "\(errors)")
                #expect(errors.last?.hasPrefix("3: bundle_id_mismatch") == true, "\(errors)")
                let user = try await ledger.get("/v1/users/hu?bundle_id=\(Self.other)")
                #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
            }
        }
    }

    @Test("the console's revenue page shows each row's app and filters by app; its CSV keeps the filter")
    func consoleRevenueByApp() async throws {
        try await Self.with { ledger in
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            let every = try await browser.get("/console/revenue?from=2023-11-01&to=2023-11-30&group_by=product")
            #expect(every.status == 200)
            #expect(every.body.contains("<td>\(LedgerHarness.bundleId)</td>") && every.body.contains("<td>\(Self.other)</td>"))
            #expect(every.body.contains("<option value=\"\(Self.other)\">\(Self.other)</option>"), "the apps to filter by")
            let one = try await browser.get("/console/revenue?from=2023-11-01&to=2023-11-30&group_by=product&bundle_id=\(Self.other)")
            #expect(one.status == 200)
            #expect(one.body.contains("<td>\(Self.other)</td>") && !one.body.contains("<td>\(LedgerHarness.bundleId)</td>"))
            #expect(one.body.contains("bundle_id=\(Self.other)"), "the downloads keep the filter")
            let csv = try await browser.get("/console/revenue.csv?from=2023-11-01&to=2023-11-30&group_by=product&bundle_id=\(Self.other)")
            #expect(csv.body.split(separator: "\r\n").dropFirst().filter { !$0.hasPrefix("total") }.allSatisfy { $0.hasSuffix(",\(Self.other)") })
            #expect(try await browser.get("/console/revenue?from=2023-11-01&to=2023-11-30&bundle_id=com.acme.unknown").status == 400)
        }
    }

    @Test("the console's subscriptions page filters by app and shows each subscription's app")
    func consoleSubscriptionsByApp() async throws {
        try await Self.with { ledger in
            let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
            var appends: [LedgerAppend] = []
            for (id, app) in [("sub-game", LedgerHarness.bundleId), ("sub-puzzle", Self.other)] {
                let delivered = PurchaseDelivered(
                    transactionId: id, originalTransactionId: id, productId: "com.example.pro.monthly", kind: .autoRenewable, quantity: 1,
                    userId: "alice", orderId: nil, environment: "Production", purchaseDateMs: 1_700_000_000_000,
                    expiresDateMs: 4_102_444_800_000, priceMilliunits: 4_990, currency: "USD", appAccountToken: nil, appTransactionId: nil,
                    isTrial: false, grants: [:], submissionId: "sub-\(id)", match: .appAccountToken, bundleId: app)
                appends.append(LedgerAppend(stream: Streams.transaction(id), expectation: .noStream, events: [.purchaseDelivered(delivered)]))
                appends.append(LedgerAppend(stream: Streams.ownership(id), expectation: .noStream, events: [
                    .ownershipClaimed(OwnershipClaimed(
                        originalTransactionId: id, productId: "com.example.pro.monthly", kind: .autoRenewable, userId: "alice", transactionId: id,
                        environment: "Production", bundleId: app)),
                ]))
            }
            try await log.append(appends, metadata: RequestMetadata(actor: "test"))
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            let every = try await browser.get("/console/subscriptions?list=active")
            #expect(every.status == 200)
            #expect(every.body.contains(">sub-game<") && every.body.contains(">sub-puzzle<"))
            #expect(every.body.contains("<td>\(Self.other)</td>"))
            let one = try await browser.get("/console/subscriptions?list=active&bundle_id=\(Self.other)")
            #expect(one.body.contains(">sub-puzzle<") && !one.body.contains(">sub-game<"))
            #expect(try await browser.get("/console/subscriptions?bundle_id=com.acme.unknown").status == 400)
        }
    }
}
