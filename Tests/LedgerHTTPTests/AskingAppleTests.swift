import AppStore
import AppStoreClient
import AppleSimulator
import Foundation
import Ledger
@testable import LedgerService
import LedgerStore
@testable import LedgerWorkers
import Logging
import Testing

/// The ledger asks Apple (App Store Server API) over real HTTP, the simulator checking every
/// JWT against the public half of a key pair made for the test.
@Suite("Asking Apple")
struct AskingAppleTests {
    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static func reconciler(_ ledger: LedgerHarness) throws -> Reconciler {
        let service = ledger.server.service
        return Reconciler(service: service, clients: try #require(service.serverAPI), logger: Logger(label: "test"))
    }

    static func coins(_ ledger: LedgerHarness, _ user: String) async throws -> Int? {
        let answer = try await ledger.get("/v1/users/\(user)")
        return (answer.json["balances"] as? [String: any Sendable])?["coins"] as? Int
    }

    @Test("a refund Apple notified while the endpoint was down is recovered by one reconcile, once; the late notification is a duplicate")
    func reconcileRecoversALostRefund() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-lost", product: "com.example.coins100", appleId: "apple-lost")
            #expect(try await ledger.submit(user: "u-lost", purchase: purchase).outcome == "delivered")
            // The endpoint goes down: Apple's refund notification never arrives.
            let endpoint = ledger.simulator.notificationURL
            ledger.simulator.notificationURL = "http://127.0.0.1:9/v1/notifications/apple"
            _ = try await ledger.simulator.refund(transactionId: purchase.transactionId, reason: 1)
            ledger.simulator.notificationURL = endpoint
            #expect(try await ledger.count("PurchaseRefunded") == 0)
            #expect(try await Self.coins(ledger, "u-lost") == 100, "the refund is lost: the balance is wrong")

            let first = try await Self.reconciler(ledger).run()
            #expect(first.map(\.recorded).reduce(0, +) >= 1, "\(first)")
            #expect(try await ledger.count("PurchaseRefunded") == 1)
            #expect(try await Self.coins(ledger, "u-lost") == 0)
            let passes = try await ledger.count("ReconciliationCompleted")
            let recorded = try await ledger.events("ReconciliationCompleted")
            #expect(passes == 2, "one per environment: \(passes), \(first), \(recorded)")

            let again = try await Self.reconciler(ledger).run()
            #expect(again.map(\.recorded).reduce(0, +) == 0, "nothing recorded twice")
            // Apple's own retry arrives late: the same notificationUUID, recorded once.
            let late = try #require(ledger.simulator.sentNotifications.last { $0.notificationType == "REFUND" })
            let answer = try await ledger.request(.POST, "/v1/notifications/apple", body: late.body, token: nil)
            #expect(answer.json["status"] as? String == "duplicate")
            #expect(try await ledger.count("PurchaseRefunded") == 1)
        }
    }

    @Test("a renewal the ledger never heard of is found by asking Apple for the subscription's status once its expiry passed")
    func reconcileAsksStatusesOfOverdueSubscriptions() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-sub", product: "com.example.pro.monthly", appleId: "apple-sub")
            #expect(try await ledger.submit(user: "u-sub", purchase: purchase).outcome == "delivered")
            let original = purchase.transaction.originalTransactionId
            let before = try await ledger.get("/v1/subscriptions/\(original)")
            let firstExpiry = before.json["expires_at"] as? String
            // Renewed while the endpoint was down, and history is not asked that far back.
            ledger.simulator.notificationURL = "http://127.0.0.1:9/v1/notifications/apple"
            let now = try await ledger.simulator.advance(days: 32)
            let summaries = try await Self.reconciler(ledger).run(sinceMs: now)
            #expect(summaries.map(\.recorded).reduce(0, +) == 0, "history from now on holds nothing")
            #expect(summaries.map(\.subscriptionsAsked).reduce(0, +) == 1, "\(summaries)")
            #expect(try await ledger.count("SubscriptionRenewalSeen") >= 1)
            let after = try await ledger.get("/v1/subscriptions/\(original)")
            #expect(after.json["status"] as? String == "active", "\(after.json)")
            #expect(after.json["expires_at"] as? String != firstExpiry)
            let again = try await Self.reconciler(ledger).run(sinceMs: now)
            #expect(again.map(\.subscriptionsAsked).reduce(0, +) == 0, "no longer overdue")
        }
    }

    @Test("CONSUMPTION_REQUEST for a consumable of which 40% was spent: Apple receives 40000 milliunits and DELIVERED; the timeline shows it")
    func consumptionAnswered() async throws {
        try await LedgerHarness.with(askApple: true, refundPreference: "DECLINE") { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-cons", product: "com.example.coins100", appleId: "apple-cons")
            #expect(try await ledger.submit(user: "u-cons", purchase: purchase).outcome == "delivered")
            #expect(try await ledger.request(.POST, "/v1/users/u-cons/spend", body: try Self.json(["unit": "coins", "amount": 40, "spend_id": "c-1"])).status == 200)
            #expect(try await ledger.request(.POST, "/v1/users/u-cons/consent", body: try Self.json(["consumption_data": true])).status == 200)
            try await ledger.simulator.requestConsumption(transactionId: purchase.transactionId)
            try await ledger.eventually("Apple received the consumption answer") { !ledger.simulator.consumptionRequests.isEmpty }
            let sent = try #require(ledger.simulator.consumptionRequests.first)
            #expect(sent.transactionId == purchase.transactionId)
            #expect(sent.information.customerConsented)
            #expect(sent.information.consumptionPercentage == 40_000)
            #expect(sent.information.rawDeliveryStatus == "DELIVERED")
            #expect(sent.information.rawRefundPreference == "DECLINE")
            try await ledger.eventually("the answer is recorded") { try await ledger.count("ConsumptionInformationSent") == 1 }
            let timeline = try await ledger.get("/v1/timelines/transactions/\(purchase.transactionId)", token: LedgerHarness.supportToken)
            let types = (timeline.json["entries"] as? [[String: any Sendable]] ?? []).compactMap { $0["type"] as? String }
            #expect(types.contains("ConsumptionInformationSent"), "\(types)")
            #expect(ledger.simulator.consumptionRequests.count == 1, "answered once")
        }
    }

    @Test("without the user's consent nothing is sent to Apple, and that is recorded")
    func consumptionWithheldWithoutConsent() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-nocons", product: "com.example.coins100", appleId: "apple-nocons")
            #expect(try await ledger.submit(user: "u-nocons", purchase: purchase).outcome == "delivered")
            try await ledger.simulator.requestConsumption(transactionId: purchase.transactionId)
            try await ledger.eventually("the withheld answer is recorded") { try await ledger.count("ConsumptionInformationWithheld") == 1 }
            let withheld = try await ledger.events("ConsumptionInformationWithheld").compactMap {
                if case .consumptionInformationWithheld(let w) = $0 { w } else { nil }
            }
            #expect(withheld.map(\.reason) == ["no_consent"])
            #expect(ledger.simulator.consumptionRequests.isEmpty)
        }
    }

    @Test("Apple answering 429 then 500 delays the answer without a retry storm; it is sent once Apple takes it")
    func consumptionThroughFailures() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-storm", product: "com.example.coins100", appleId: "apple-storm")
            #expect(try await ledger.submit(user: "u-storm", purchase: purchase).outcome == "delivered")
            #expect(try await ledger.request(.POST, "/v1/users/u-storm/consent", body: try Self.json(["consumption_data": true])).status == 200)
            ledger.simulator.failNextServerAPICalls(3, with: .rateLimited(retryAfterSeconds: 1))
            try await ledger.simulator.requestConsumption(transactionId: purchase.transactionId)
            try await ledger.eventually("Apple received the answer", within: .seconds(60)) { !ledger.simulator.consumptionRequests.isEmpty }
            #expect(ledger.simulator.consumptionRequests.count == 1)
            #expect(ledger.simulator.consumptionRequests.first?.information.consumptionPercentage == 0)
            #expect(ledger.simulator.serverAPICalls(to: .consumption) <= 6, "no retry storm: \(ledger.simulator.serverAPICalls(to: .consumption)) calls")
        }
    }

    @Test("an Apple order id finds its transactions and their owner; an unknown one is 404; without credentials, 503 apple_not_configured")
    func appleOrderLookUp() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-order", product: "com.example.removeads", appleId: "apple-order")
            #expect(try await ledger.submit(user: "u-order", purchase: purchase).outcome == "delivered")
            let found = try await ledger.get("/v1/apple-orders/\(purchase.orderId)", token: LedgerHarness.supportToken)
            #expect(found.status == 200, "\(found.json)")
            let transactions = found.json["transactions"] as? [[String: any Sendable]] ?? []
            #expect(transactions.compactMap { $0["transaction_id"] as? String } == [purchase.transactionId])
            #expect(transactions.first?["user_id"] as? String == "u-order")
            #expect(try await ledger.count("AppleOrderLookedUp") == 1)
            let unknown = try await ledger.get("/v1/apple-orders/ZZZZZZZZZZ", token: LedgerHarness.supportToken)
            #expect(unknown.status == 404)
        }
        try await LedgerHarness.with { ledger in
            let answer = try await ledger.get("/v1/apple-orders/MK5TTTVWJH", token: LedgerHarness.financeToken)
            #expect(answer.status == 503)
            #expect(answer.errorCode == "apple_not_configured")
        }
    }

    @Test("a restore through Apple delivers a non-consumable another device bought to this user, and no old coins; again, already_delivered")
    func restoreThroughApple() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            // Bought on the Apple account, never posted to the ledger: coins and remove-ads.
            let coins = try await ledger.simulator.purchase(appleId: "apple-restore", productId: "com.example.coins100", environment: .production, appAccountToken: nil)
            let ads = try await ledger.simulator.purchase(appleId: "apple-restore", productId: "com.example.removeads", environment: .production, appAccountToken: nil)
            let first = try await ledger.request(
                .POST, "/v1/users/u-restore/restore", body: try Self.json(["transaction_id": coins.transactionId]), headers: [("Idempotency-Key", "r-1")])
            #expect(first.status == 200, "\(first.json)")
            #expect(first.outcome == "delivered")
            #expect(first.deliveries.compactMap { $0["transaction_id"] as? String } == [ads.transactionId], "the coins were not ordered: not owed")
            #expect(try await ledger.count("TransactionHistoryRead") == 1)
            let again = try await ledger.request(.POST, "/v1/users/u-restore/restore", body: try Self.json(["signed_transaction": ads.signedTransaction]))
            #expect(again.outcome == "already_delivered")
            let replayed = try await ledger.request(
                .POST, "/v1/users/u-restore/restore", body: try Self.json(["transaction_id": coins.transactionId]), headers: [("Idempotency-Key", "r-1")])
            #expect(replayed.outcome == "delivered", "the first result again")
            #expect(try await Self.coins(ledger, "u-restore") == nil)
        }
    }

    @Test("a restore while Apple answers 503 is pending, and the worker finishes it")
    func restorePendingThenDone() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let ads = try await ledger.simulator.purchase(appleId: "apple-restore-2", productId: "com.example.removeads", environment: .production, appAccountToken: nil)
            ledger.simulator.failNextServerAPICalls(8, with: .serverError(status: 503), endpoint: .transactionHistory)
            let answer = try await ledger.request(.POST, "/v1/users/u-restore-2/restore", body: try Self.json(["transaction_id": ads.transactionId]))
            #expect(answer.status == 202, "\(answer.json)")
            try await ledger.eventually("the worker restored it", within: .seconds(60)) { try await ledger.count("PurchaseDelivered") == 1 }
        }
    }

    @Test("a Server API call that times out is tried again after a backoff, and the time-out is kept as an attempt")
    func timeoutRetried() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-slow", product: "com.example.removeads", appleId: "apple-slow")
            var configuration = try #require(ledger.server.service.serverAPI).first.configuration
            // Generous against a loaded machine: only the delayed call may time out for sure.
            configuration.timeout = .seconds(2)
            configuration.maximumAttempts = 4
            let client = try await ServerAPIClient(configuration: configuration, clock: .system)
            ledger.simulator.failNextServerAPICalls(1, with: .normal, delay: .seconds(8), endpoint: .orderLookup)
            let answer = try await client.lookUpOrder(purchase.orderId, environment: .production)
            #expect(answer.value.status == 0)
            #expect(answer.attempts.first?.failure == "timeout")
            #expect(answer.attempts.first?.httpStatus == nil)
            #expect(answer.attempts.last?.failure == nil)
            #expect(answer.attempts.last?.httpStatus == 200)
        }
    }

    @Test("a 401 from Apple is an alarm, not a retry storm: one call, the metric counts it")
    func unauthorizedIsAnAlarm() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            ledger.simulator.failNextServerAPICalls(5, with: .unauthorized)
            let answer = try await ledger.get("/v1/apple-orders/MK5TTTVWJH", token: LedgerHarness.supportToken)
            #expect(answer.status == 503)
            #expect(answer.errorCode == "apple_unavailable")
            #expect(ledger.simulator.serverAPICalls(to: .orderLookup) == 1, "a 401 is not retried")
            let metrics = try await ledger.request(.GET, "/metrics", token: nil)
            #expect(metrics.status == 200)
        }
    }
}
