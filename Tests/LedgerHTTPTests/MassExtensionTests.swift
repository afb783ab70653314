import AppleSimulator
import Foundation
import Ledger
import LedgerStore
import Postgres
import Testing

/// Apple's mass extension through `PurchaseService` (what `extend-renewals` runs), over real
/// HTTP to the simulator, which extends each subscription and tells each by RENEWAL_EXTENDED.
/// Runs after the parallel batch in Tools/test (with the webhook chaos tests): 500 purchases.
@Suite("Mass extension of a product's subscribers", .serialized)
struct MassExtensionTests {
    static let yearly = "com.example.pro.yearly"
    static let count = 500

    @Test("500 subscriptions extended once each with Apple answering 429 to status polls: expiries moved, each told once, the request and its completion recorded")
    func massExtension() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            // 500 subscribers from 8 clients; the yearly plan has no free trial (Apple extends none).
            let originals = try await withThrowingTaskGroup(of: [String].self) { group in
                for client in 0..<8 {
                    group.addTask {
                        var mine: [String] = []
                        for index in stride(from: client, to: Self.count, by: 8) {
                            let (_, purchase) = try await ledger.orderAndBuy(user: "m-\(index)", product: Self.yearly, appleId: "apple-m\(index)")
                            let answer = try await ledger.submit(user: "m-\(index)", purchase: purchase)
                            guard answer.outcome == "delivered" else { throw HarnessError("purchase \(index): \(answer.status) \(answer.json)") }
                            mine.append(purchase.transaction.originalTransactionId)
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(originals.count == Self.count)
            let sample = Array(originals.prefix(5))
            var before: [String: String] = [:]
            for original in sample { before[original] = try await ledger.get("/v1/subscriptions/\(original)").json["expires_at"] as? String }

            // Apple rate limits some status polls: the client waits as asked, the follower polls on.
            ledger.simulator.injectServerAPIFailure(ServerAPIFailureRule(.rateLimited(retryAfterSeconds: 1), next: 3, endpoint: .massExtendRenewalDateStatus))
            let service = ledger.server.service
            let metadata = RequestMetadata(actor: "test")
            let requested = try await service.requestMassExtension(
                productId: Self.yearly, days: 7, reason: .serviceIssue, storefronts: nil, environment: .production, note: "outage of the 3rd",
                metadata: metadata)
            #expect(ledger.simulator.massRenewalExtensions.map(\.requestIdentifier) == [requested.requestId], "Apple holds the request")
            let completed = try #require(try await service.followMassExtension(requested, pollEvery: .milliseconds(200), timeout: .seconds(120), metadata: metadata))
            #expect(completed.succeededCount == Int64(Self.count) && completed.failedCount == 0)
            #expect(try await ledger.count("MassRenewalExtensionRequested") == 1)
            #expect(try await ledger.count("MassRenewalExtensionCompleted") == 1)

            // Each extended once at Apple, each told to the ledger.
            let extended = ledger.simulator.renewalExtensions.filter { $0.massExtensionProductId == Self.yearly }
            #expect(extended.count == Self.count)
            #expect(Set(extended.map(\.originalTransactionId)) == Set(originals))
            try await ledger.eventually("every RENEWAL_EXTENDED is recorded", within: .seconds(60)) {
                try await ledger.pool.withConnection {
                    try $0.query("SELECT count(*) FROM events WHERE event_type = 'AppleNotificationReceived' AND payload->>'notification_type' = 'RENEWAL_EXTENDED'")[0].decode(0, as: Int64.self)
                } == Int64(Self.count)
            }
            // Expiries moved by 7 days.
            let formatter = ISO8601DateFormatter.withFractions
            for original in sample {
                let after = try #require(try await ledger.get("/v1/subscriptions/\(original)").json["expires_at"] as? String)
                let moved = (formatter.date(from: after)?.timeIntervalSince1970 ?? 0) - (formatter.date(from: before[original] ?? "")?.timeIntervalSince1970 ?? 0)
                #expect(moved == 7 * 86_400, "\(original): \(before[original] ?? "?") → \(after)")
            }
            // Told once each to the app's backends.
            var told: [String: Int] = [:]
            var after = 0
            while true {
                let page = try await ledger.get("/v1/events?after=\(after)&limit=1000")
                let events = page.json["events"] as? [[String: Any]] ?? []
                if events.isEmpty { break }
                for event in events where event["type"] as? String == "subscription.extended" {
                    told[(event["data"] as? [String: Any])?["original_transaction_id"] as? String ?? "", default: 0] += 1
                }
                after = page.json["next"] as? Int ?? after
            }
            #expect(told.count == Self.count && told.values.allSatisfy { $0 == 1 }, "\(told.count) subscriptions told, repeats: \(told.filter { $0.value != 1 }.count)")
        }
    }
}
