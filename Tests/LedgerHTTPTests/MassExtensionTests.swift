import AppleSimulator
import Foundation
import Ledger
import LedgerStore
import LedgerWebhooks
import Postgres
import Testing

/// Apple's mass extension through `PurchaseService` (what `extend-renewals` runs), over real
/// HTTP to the simulator, which extends each subscription and tells each by RENEWAL_EXTENDED.
/// Runs after the parallel batch in Tools/test (with the webhook chaos tests): 500 purchases.
@Suite("Mass extension of a product's subscribers", .serialized)
struct MassExtensionTests {
    static let yearly = "com.example.pro.yearly"
    static let count = 500

    @Test("500 subscriptions extended once each with Apple down for the request and answering 429 to status polls past the client's waits: the request recorded first and sent again, never twice; every expiry moved; each told once to a webhook endpoint; the act in each subscription's timeline")
    func massExtension() async throws {
        let receiver = WebhookReceiver(signer: try WebhookFlowTests.signer())
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(askApple: true, webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)]) { ledger in
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
            var before: [String: String] = [:]
            for original in originals { before[original] = try await ledger.get("/v1/subscriptions/\(original)").json["expires_at"] as? String }

            // Apple down for the request, past the client's retries: nothing extended, the
            // request recorded and left unfinished.
            let service = ledger.server.service
            let metadata = RequestMetadata(actor: "test")
            ledger.simulator.injectServerAPIFailure(ServerAPIFailureRule(.serverError(status: 503), next: 20, endpoint: .massExtendRenewalDate))
            await #expect(throws: LedgerServiceError.self) {
                _ = try await service.requestMassExtension(
                    productId: Self.yearly, days: 7, reason: .serviceIssue, storefronts: nil, environment: .production, note: "outage of the 3rd",
                    metadata: metadata)
            }
            #expect(ledger.simulator.massRenewalExtensions.isEmpty)
            #expect(try await ledger.count("MassRenewalExtensionRequested") == 1)
            ledger.simulator.clearServerAPIFailures()

            // Run again: the recorded request is sent again, not a second one. Apple rate
            // limits a dozen status polls, more than the client's own waits absorb, so the
            // follower's polls meet 429s too.
            let statusCalls = ledger.simulator.serverAPICalls(to: .massExtendRenewalDateStatus)
            ledger.simulator.injectServerAPIFailure(ServerAPIFailureRule(.rateLimited(retryAfterSeconds: 1), next: 12, endpoint: .massExtendRenewalDateStatus))
            let asked = try await service.requestMassExtension(
                productId: Self.yearly, days: 7, reason: .serviceIssue, storefronts: nil, environment: .production, note: "outage of the 3rd",
                metadata: metadata)
            #expect(asked.resumed)
            #expect(ledger.simulator.massRenewalExtensions.map(\.requestIdentifier) == [asked.requested.requestId], "Apple holds one request")
            let completed = try #require(try await service.followMassExtension(asked, pollEvery: .milliseconds(200), timeout: .seconds(180), metadata: metadata))
            #expect(completed.succeededCount == Int64(Self.count) && completed.failedCount == 0)
            #expect(completed.answerDocumentSha256 != nil, "Apple's answer to the request is kept with the completion")
            #expect(ledger.simulator.serverAPICalls(to: .massExtendRenewalDateStatus) - statusCalls > 12, "the 429s were served, then a status")
            #expect(try await ledger.count("MassRenewalExtensionRequested") == 1)
            #expect(try await ledger.count("MassRenewalExtensionCompleted") == 1)
            // A third run of the same extension starts a new request: the first is complete.
            #expect(try await ledger.server.service.reads.unfinishedMassExtensions(productId: Self.yearly, environment: "Production").isEmpty)

            // Each extended once at Apple, each told to the ledger.
            let extended = ledger.simulator.renewalExtensions.filter { $0.massExtensionProductId == Self.yearly }
            #expect(extended.count == Self.count)
            #expect(Set(extended.map(\.originalTransactionId)) == Set(originals))
            try await ledger.eventually("every RENEWAL_EXTENDED is recorded", within: .seconds(60)) {
                try await ledger.pool.withConnection {
                    try $0.query("SELECT count(*) FROM events WHERE event_type = 'AppleNotificationReceived' AND payload->>'notification_type' = 'RENEWAL_EXTENDED'")[0].decode(0, as: Int64.self)
                } == Int64(Self.count)
            }
            // Every expiry moved by 7 days.
            let formatter = ISO8601DateFormatter.withFractions
            var notMoved: [String] = []
            for original in originals {
                let after = try #require(try await ledger.get("/v1/subscriptions/\(original)").json["expires_at"] as? String)
                let moved = (formatter.date(from: after)?.timeIntervalSince1970 ?? 0) - (formatter.date(from: before[original] ?? "")?.timeIntervalSince1970 ?? 0)
                if moved != 7 * 86_400 { notMoved.append("\(original): \(before[original] ?? "?") → \(after)") }
            }
            #expect(notMoved.isEmpty, "\(notMoved.prefix(5))")
            // Told once each to the app's backend, at its endpoint.
            try await ledger.eventually("every extension reaches the endpoint", within: .seconds(120)) {
                Set(receiver.acknowledged.filter { $0.type == "subscription.extended" }.map { $0.data["original_transaction_id"] as? String ?? "" }).count == Self.count
            }
            var told: [String: Int] = [:]
            for arrival in receiver.acknowledged where arrival.type == "subscription.extended" {
                told[arrival.data["original_transaction_id"] as? String ?? "", default: 0] += 1
            }
            let repeated = told.filter { $0.value != 1 }.count
            #expect(Set(told.keys) == Set(originals))
            #expect(repeated == 0, "\(repeated) subscriptions told more than once")
            let unsigned = receiver.arrivals.filter { $0.type == "subscription.extended" && !$0.signatureValid }
            #expect(unsigned.isEmpty, "every message signed")

            // The act in a subscription's timeline: who asked, why, and Apple's completion.
            let timeline = try await ledger.get("/v1/timelines/transactions/\(originals[0])", token: LedgerHarness.financeToken)
            #expect(timeline.status == 200)
            let types = (timeline.json["entries"] as? [[String: Any]] ?? []).map { $0["type"] as? String ?? "" }
            #expect(types.contains("MassRenewalExtensionRequested") && types.contains("MassRenewalExtensionCompleted"), "\(types)")
        }
    }
}
