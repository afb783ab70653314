import AppStoreClient
import AppleSimulator
import Foundation
import Ledger
import Primitives
import Testing

/// The ledger reads the time only through the clocks it is given (issue 23, "One clock"): with
/// every clock fixed years away from any machine's today, each date it records and each status
/// it reads is that date's, never the machine's.
@Suite("One clock: a ledger whose clock is fixed at 2031-01-01 dates and decides everything by it")
struct FixedClockTests {
    /// 2031-01-01T00:00:00Z, the ledger's now: far enough from today that a stray reading of the
    /// machine's clock shows.
    static let now: Int64 = 1_924_992_000_000
    /// Apple's simulated clock starts on 2029-12-01T00:00:00Z, so a yearly plan bought then has
    /// ended by the ledger's now, and has not by the machine's.
    static let appleStart = Date(timeIntervalSince1970: 1_890_777_600)

    @Test("orders, submissions, Apple's answers and notifications are dated 2031-01-01; a plan that ended in 2030 reads expired")
    func everythingOnTheFixedClock() async throws {
        try await LedgerHarness.with(clock: .fixed(Self.now), appleStart: Self.appleStart) { ledger in
            let (_, coins) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: coins).outcome == "delivered")
            let (_, yearly) = try await ledger.orderAndBuy(user: "u1", product: "com.example.pro.yearly", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: yearly).outcome == "delivered")
            let expires = try #require(yearly.transaction.expiresDateMs)
            // The plan's status tells the clocks apart: ended by the ledger's, running by the machine's.
            #expect(expires < Self.now)
            #expect(expires > WallClock.system(), "move the dates: the test tells the clocks apart only while the machine's is before the plan's end")

            // Every date the ledger recorded is its clock's.
            let orders = try await ledger.events("OrderCreated")
            #expect(orders.count == 2)
            for case .orderCreated(let order) in orders { #expect(order.createdAtMs == Self.now) }
            let submissions = try await ledger.events("ReceiptSubmitted")
            #expect(submissions.count == 2)
            for case .receiptSubmitted(let submission) in submissions { #expect(submission.submittedAtMs == Self.now) }
            let answers = try await ledger.events("AppleResponded")
            #expect(answers.count >= 2)
            for case .appleResponded(let answer) in answers { #expect(answer.startedAtMs == Self.now) }
            try await ledger.eventually("Apple's notifications of the purchases are recorded") {
                try await ledger.count("AppleNotificationReceived") >= 1
            }
            let notifications = try await ledger.events("AppleNotificationReceived")
            for case .appleNotificationReceived(let notification) in notifications { #expect(notification.receivedAtMs == Self.now) }
            // Apple's dates stay Apple's: the purchases happened on the simulated 2029-12-01.
            let deliveries = try await ledger.events("PurchaseDelivered")
            #expect(deliveries.count == 2)
            for case .purchaseDelivered(let delivery) in deliveries {
                #expect(delivery.purchaseDateMs.map { $0 < Self.now && $0 >= Int64(Self.appleStart.timeIntervalSince1970 * 1000) } == true)
            }
            // Nothing is pending: no retry was scheduled (on the machine's clock, fixed here too).
            #expect(try await ledger.count("VerificationPending") == 0)

            // Reads tell statuses at the ledger's now.
            let subscription = try await ledger.get("/v1/subscriptions/\(yearly.transaction.originalTransactionId)")
            #expect(subscription.status == 200)
            #expect(subscription.json["status"] as? String == "expired")
            let user = try await ledger.get("/v1/users/u1")
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
            let entitlements = user.json["entitlements"] as? [[String: any Sendable]] ?? []
            let plan = entitlements.first { $0["product_id"] as? String == "com.example.pro.yearly" }
            #expect(plan?["active"] as? Bool == false)
        }
    }
}
