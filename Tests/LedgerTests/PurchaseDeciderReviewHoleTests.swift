import AppStore
import Foundation
import Testing

@testable import Ledger

/// The holes a review found in the rules, each pinned by the test that failed before its fix.
@Suite("Deciding a purchase: the review's holes")
struct PurchaseDeciderReviewHoleTests {
    @Test("a receipt without transaction id and with no open order delivers to the submitting user, recording no_order")
    func noOrderDeliversToTheSubmitter() {
        let decision = PurchaseDecider.decide(
            Given.submission(),
            evidence: Given.evidence(Given.entry("C1", Given.coins), Given.entry("R1", Given.removeAds)),
            context: Given.context())
        #expect(decision.deliveries.map(\.transactionId) == ["C1", "R1"])
        #expect(decision.deliveries.allSatisfy { $0.userId == Given.alice && $0.orderId == nil })
        let matches = decision.appends.compactMap { if case .purchaseDelivered(let d)? = $0.events.first { d.match } else { nil } }
        #expect(matches == [.noOrder, .noOrder])
        #expect(decision.streams.contains(Streams.ownership("R1")))
    }

    @Test("without transaction id or order, a product missing from the catalog answers unknown_product")
    func unknownProductWithoutOrder() {
        let decision = PurchaseDecider.decide(
            Given.submission(),
            evidence: Given.evidence(Given.entry("X1", "com.example.not-for-sale")),
            context: Given.context())
        #expect(decision.rejection == .unknownProduct)
    }

    @Test("without transaction id, a refunded purchase that is the receipt's only one answers transaction_refunded")
    func refundedWithoutOrder() {
        let decision = PurchaseDecider.decide(
            Given.submission(),
            evidence: Given.evidence(Given.entry("C1", Given.coins, cancelledAt: Given.t0 + Given.day)),
            context: Given.context())
        #expect(decision.rejection == .transactionRefunded)
    }

    @Test("one bundle rule: evidence naming no app is refused, another app's too, this app's passes")
    func oneBundleRule() {
        #expect(AppCheck.refusal(of: Given.evidence(Given.entry("T1", Given.coins), bundleId: nil), bundleId: Given.bundleId) != nil)
        #expect(AppCheck.refusal(of: Given.evidence(Given.entry("T1", Given.coins), bundleId: "com.other"), bundleId: Given.bundleId) != nil)
        #expect(AppCheck.refusal(of: Given.evidence(Given.entry("T1", Given.coins)), bundleId: Given.bundleId) == nil)
    }

    @Test("over several apps: evidence of any app served passes, another app's is refused naming the apps served")
    func severalAppsRule() {
        let served = [Given.bundleId, "com.example.puzzle"]
        #expect(AppCheck.refusal(of: Given.evidence(Given.entry("T1", Given.coins), bundleId: "com.example.puzzle"), servedApps: served) == nil)
        #expect(AppCheck.refusal(of: Given.evidence(Given.entry("T1", Given.coins)), servedApps: served) == nil)
        let refused = AppCheck.refusal(of: Given.evidence(Given.entry("T1", Given.coins), bundleId: "com.other"), servedApps: served)
        #expect(refused == "the receipt is for bundle com.other, which is none of the apps this ledger serves (\(Given.bundleId), com.example.puzzle)")
        #expect(AppCheck.refusal(of: Given.evidence(Given.entry("T1", Given.coins), bundleId: nil), servedApps: served) != nil)
    }
}

/// A v1 notification's top-level `cancellation_date` speaks of the transaction it names.
@Suite("v1 notifications: whose cancellation")
struct NotificationV1CancellationTests {
    static func transaction(_ id: String, line: String) -> [String: Any] {
        ["transaction_id": id, "original_transaction_id": "O1", "product_id": "com.example.pro.monthly", "quantity": "1",
         "purchase_date_ms": "1700000000000", "expires_date": "1702592000000", "web_order_line_item_id": line]
    }

    static func notification(type: String, line: String?, transactions: [[String: Any]]) throws -> NotificationV1 {
        var body: [String: Any] = [
            "notification_type": type, "environment": "PROD", "password": "s", "bid": "com.example.app",
            "cancellation_date_ms": "1701000000000", "latest_expired_receipt_info": transactions.count == 1 ? transactions[0] : transactions,
        ]
        if let line { body["web_order_line_item_id"] = line }
        return try NotificationV1(jsonBytes: try JSONSerialization.data(withJSONObject: body))
    }

    @Test("a CANCEL's cancellation applies to the transaction its web_order_line_item_id names, and to no other")
    func namedTransactionOnly() throws {
        let evidence = try #require(Evidence(notification: try Self.notification(
            type: "CANCEL", line: "L2", transactions: [Self.transaction("T1", line: "L1"), Self.transaction("T2", line: "L2")])))
        #expect(evidence.entry("T2")?.cancellationDateMs == 1_701_000_000_000)
        #expect(evidence.entry("T1")?.cancellationDateMs == nil)
    }

    @Test("a top-level cancellation_date on another type of notification refunds nothing")
    func onlyCancel() throws {
        let evidence = try #require(Evidence(notification: try Self.notification(
            type: "DID_CHANGE_RENEWAL_STATUS", line: "L1", transactions: [Self.transaction("T1", line: "L1")])))
        #expect(evidence.entry("T1")?.cancellationDateMs == nil)
    }

    @Test("Monza's CANCEL fixture: its one transaction is refunded, and the app is read from the transaction's bid")
    func monzaCancel() throws {
        let evidence = try #require(Evidence(notification: try NotificationV1(jsonBytes: (AppleFixtures.data(
            "notification-v1-cancel-latest_expired_receipt_info-monza.json")))))
        #expect(evidence.entry("720000240377671")?.cancellationDateMs == 1_521_757_701_000)
        #expect(evidence.bundleId == "com.bundle.id")
    }
}
