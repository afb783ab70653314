import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import TestSupport
import Testing

/// A ledger serving several apps verifies each app's purchases as that app's
/// (docs/several-apps.md): Apple's evidence picks the app, its catalog and its balances; a
/// receipt whose app's secret is not the first app's is asked again with the others'; signed data
/// of any app served verifies, another's is refused.
@Suite struct SeveralAppsVerificationTests {
    static let first = "com.example.other"
    static let apps: LedgerApps = {
        do {
            return try LedgerApps([
                AppSettings(bundleId: first, sharedSecret: "other-app-secret"),
                AppSettings(bundleId: LedgerHarness.bundleId, sharedSecret: "this-app-secret"),
            ])
        } catch {
            preconditionFailure("two distinct apps: \(error)")
        }
    }()

    static func loadCatalog(_ ledger: LedgerHarness) async throws {
        let log = LedgerLog(store: EventStore(pool: ledger.pool, logger: TestDatabase.logger))
        _ = try await CatalogStore().load(Data(LedgerHarness.catalog.utf8), bundleId: LedgerHarness.bundleId, into: log, metadata: RequestMetadata(actor: "test"))
    }

    @Test("a receipt of the second app is asked again with its secret after Apple's 21004, and delivered as that app's")
    func receiptOfTheSecondApp() async throws {
        // The simulator is the second app's: it answers 21004 to any other secret.
        try await LedgerHarness.with(sharedSecret: "this-app-secret", apps: Self.apps) { ledger in
            try await Self.loadCatalog(ledger)
            let purchase = try await ledger.simulator.purchase(appleId: "apple-cy", productId: "com.example.coins100", environment: .production)
            let answer = try await ledger.submit(user: "cy", purchase: purchase)
            #expect(answer.status == 200, "\(answer.json)")
            #expect(answer.outcome == "delivered")
            let statuses = try await ledger.events(AppleResponded.eventType).compactMap { event -> Int? in
                if case .appleResponded(let responded) = event { responded.status } else { nil }
            }
            #expect(statuses == [21004, 0], "the first app's secret, then the second's")
            let delivered = try await ledger.events(PurchaseDelivered.eventType).compactMap { event -> String? in
                if case .purchaseDelivered(let d) = event { d.bundleId } else { nil }
            }
            #expect(delivered == [LedgerHarness.bundleId])

            // Several apps and none named: the top level is empty; the app's own is under apps.
            let user = try await ledger.get("/v1/users/cy")
            #expect((user.json["balances"] as? [String: any Sendable])?.isEmpty == true, "\(user.json)")
            let apps = user.json["apps"] as? [[String: any Sendable]] ?? []
            #expect(apps.map { $0["bundle_id"] as? String } == [LedgerHarness.bundleId])
            let scoped = try await ledger.get("/v1/users/cy?bundle_id=\(LedgerHarness.bundleId)")
            #expect((scoped.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
        }
    }

    @Test("a signed transaction of any app served verifies as that app's")
    func signedTransactionOfTheSecondApp() async throws {
        try await LedgerHarness.with(sharedSecret: "this-app-secret", apps: Self.apps) { ledger in
            try await Self.loadCatalog(ledger)
            let purchase = try await ledger.simulator.purchase(appleId: "apple-di", productId: "com.example.removeads", environment: .production)
            let answer = try await ledger.post("/v1/transactions", ["user_id": "di", "signed_transaction": purchase.signedTransaction])
            #expect(answer.status == 200, "\(answer.json)")
            let user = try await ledger.get("/v1/users/di?bundle_id=\(LedgerHarness.bundleId)")
            let entitlements = user.json["entitlements"] as? [[String: any Sendable]] ?? []
            #expect(entitlements.map { $0["product_id"] as? String } == ["com.example.removeads"])
            #expect(entitlements.map { $0["bundle_id"] as? String } == [LedgerHarness.bundleId])
        }
    }

    @Test("a receipt of an app the ledger does not serve is refused as bundle_id_mismatch, naming the apps served")
    func receiptOfAnUnservedApp() async throws {
        let unserved = try LedgerApps([AppSettings(bundleId: Self.first, sharedSecret: "this-app-secret"), AppSettings(bundleId: "com.example.third")])
        try await LedgerHarness.with(sharedSecret: "this-app-secret", apps: unserved) { ledger in
            let purchase = try await ledger.simulator.purchase(appleId: "apple-ed", productId: "com.example.coins100", environment: .production)
            let answer = try await ledger.submit(user: "ed", purchase: purchase)
            #expect(answer.status == 422, "\(answer.json)")
            #expect(answer.errorCode == "bundle_id_mismatch")
            let signed = try await ledger.post("/v1/transactions", ["user_id": "ed", "signed_transaction": purchase.signedTransaction])
            #expect(signed.errorCode == "bundle_id_mismatch", "\(signed.json)")
            #expect(try await ledger.count(PurchaseDelivered.eventType) == 0)
        }
    }
}
