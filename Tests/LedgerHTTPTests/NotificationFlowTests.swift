import AppleSimulator
import Foundation
import Ledger
import NIOHTTP1
import Testing

@Suite("Apple's notifications: refunds, revocations, renewals, recorded once")
struct NotificationFlowTests {
    @Test("a v1 CANCEL naming no app is recorded but refunds nothing; the same CANCEL naming this app refunds its one transaction")
    func v1CancelNeedsTheBundle() async throws {
        try await LedgerHarness.with(sharedSecret: "s3cret-shared-0123") { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.removeads", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: purchase).outcome == "delivered")
            func cancel(bid: String?) -> String {
                let bundle = bid.map { #","bid":"\#($0)""# } ?? ""
                return #"{"notification_type":"CANCEL","password":"s3cret-shared-0123","environment":"PROD","cancellation_date_ms":"1767225600000","web_order_line_item_id":"w1"\#(bundle),"latest_receipt_info":{"transaction_id":"\#(purchase.transactionId)","original_transaction_id":"\#(purchase.transactionId)","product_id":"com.example.removeads","quantity":"1","purchase_date_ms":"1767139200000","web_order_line_item_id":"w1"}}"#
            }
            let before = try await ledger.count("AppleNotificationReceived")
            let anonymous = try await ledger.request(.POST, "/v1/notifications/apple", body: cancel(bid: nil), token: nil)
            #expect(anonymous.status == 200)
            #expect(try await ledger.count("PurchaseRefunded") == 0, "nothing proves this notification is this app's")
            let named = try await ledger.request(.POST, "/v1/notifications/apple", body: cancel(bid: "com.example.app"), token: nil)
            #expect(named.status == 200)
            #expect(try await ledger.count("PurchaseRefunded") == 1)
            #expect(try await ledger.count("AppleNotificationReceived") == before + 2, "both are kept verbatim")
        }
    }

    @Test("a v2 REFUND of a delivered consumable debits the balance once, however often Apple repeats it")
    func refundOnce() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: purchase).outcome == "delivered")
            _ = try await ledger.simulator.refund(transactionId: purchase.transactionId, reason: 1)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            let user = try await ledger.get("/v1/users/u1")
            #expect((user.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 0)
            // Apple resends the same notification: recorded once, answered 200.
            let sent = try #require(ledger.simulator.sentNotifications.last)
            let received = try await ledger.count("AppleNotificationReceived")
            let again = try await ledger.request(.POST, "/v1/notifications/apple", body: sent.body, token: nil)
            #expect(again.status == 200)
            #expect(again.json["status"] as? String == "duplicate")
            // And a later receipt showing the cancellation does not refund twice.
            _ = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(try await ledger.count("PurchaseRefunded") == 1)
            #expect(try await ledger.count("AppleNotificationReceived") == received)
        }
    }

    @Test("a refund of a spent consumable takes the balance negative: reported, not hidden")
    func negativeBalance() async throws {
        try await LedgerHarness.with { ledger in
            let (_, first) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: first).outcome == "delivered")
            // A refund notification arrives for a transaction delivered twice over (two purchases, one refunded twice is one).
            _ = try await ledger.simulator.refund(transactionId: first.transactionId)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            let events = try await ledger.events("PurchaseRefunded")
            guard case .purchaseRefunded(let refund)? = events.first else { Issue.record("no refund"); return }
            #expect(refund.grants == ["coins": 100])
            let u1 = try await ledger.recorded("u1")
            #expect(refund.userId == u1)
        }
    }

    @Test("a v2 REVOKE of a non-consumable ends the entitlement")
    func revoke() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.removeads", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: purchase).outcome == "delivered")
            _ = try await ledger.simulator.revoke(transactionId: purchase.transactionId)
            try await ledger.eventually("the revocation is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            let user = try await ledger.get("/v1/users/u1")
            let entitlement = try #require((user.json["entitlements"] as? [[String: any Sendable]])?.first)
            #expect(entitlement["active"] as? Bool == false)
            guard case .purchaseRefunded(let refund)? = try await ledger.events("PurchaseRefunded").first else { return }
            #expect(refund.revocation == "revoke")
        }
    }

    @Test("a v1 notification needs the shared secret; with it, it is recorded once per body")
    func v1SharedSecret() async throws {
        try await LedgerHarness.with(sharedSecret: "s3cret-shared-0123") { ledger in
            let body = #"{"notification_type":"DID_CHANGE_RENEWAL_STATUS","password":"s3cret-shared-0123","environment":"PROD","bid":"com.example.app","auto_renew_status":"false"}"#
            let first = try await ledger.request(.POST, "/v1/notifications/apple", body: body, token: nil)
            let second = try await ledger.request(.POST, "/v1/notifications/apple", body: body, token: nil)
            let forged = try await ledger.request(.POST, "/v1/notifications/apple", body: body.replacingOccurrences(of: "s3cret-shared-0123", with: "guess"), token: nil)
            #expect(first.status == 200)
            #expect(first.json["status"] as? String == "recorded")
            #expect(second.json["status"] as? String == "duplicate")
            #expect(forged.status == 401)
            #expect(try await ledger.count("AppleNotificationReceived") == 1)
        }
    }

    @Test("a CONSUMPTION_REQUEST is recorded verbatim with its reason")
    func consumptionRequest() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: purchase).outcome == "delivered")
            try await ledger.simulator.requestConsumption(transactionId: purchase.transactionId)
            try await ledger.eventually("the request is recorded") {
                try await ledger.events("AppleNotificationReceived").contains {
                    if case .appleNotificationReceived(let r) = $0 { return r.notificationType == "CONSUMPTION_REQUEST" }
                    return false
                }
            }
            let all = try await ledger.events("AppleNotificationReceived")
            guard case .appleNotificationReceived(let received)? = all.last else { return }
            #expect(received.notificationType == "CONSUMPTION_REQUEST")
            #expect(received.consumptionRequestReason == "UNINTENDED_PURCHASE")
            #expect(received.transactionId == purchase.transactionId)
            let stored = try await ledger.server.service.documents.get(received.documentSha256)
            #expect(stored != nil)
        }
    }
}

@Suite("GET /v1/subscriptions: expiry and status from everything Apple showed")
struct SubscriptionFlowTests {
    @Test("a monthly plan with a trial: active in trial, renewed by DID_RENEW, expired when auto-renew is off, revoked on refund")
    func lifecycle() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.pro.monthly", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: purchase).outcome == "delivered")
            let original = purchase.transaction.originalTransactionId
            var view = try await ledger.get("/v1/subscriptions/\(original)")
            #expect(view.status == 200)
            #expect(view.json["status"] as? String == "active")
            #expect(view.json["in_trial"] as? Bool == true)
            #expect(view.json["owner_user_id"] as? String == "u1")
            // The trial ends and the plan renews: Apple tells us by notification.
            _ = try await ledger.simulator.advance(days: 8)
            try await ledger.eventually("the renewal is seen") { try await ledger.count("SubscriptionRenewalSeen") >= 1 }
            view = try await ledger.get("/v1/subscriptions/\(original)")
            #expect(view.json["status"] as? String == "active")
            #expect(view.json["in_trial"] as? Bool == false)
            // Renewal off, then past the paid period: expired.
            try await ledger.simulator.setAutoRenew(originalTransactionId: original, enabled: false)
            _ = try await ledger.simulator.advance(days: 40)
            // A fresh receipt shows it; resubmitting the original purchase is already delivered.
            let resubmitted = try await ledger.submit(user: "u1", purchase: purchase)
            #expect(resubmitted.outcome == "already_delivered")
            view = try await ledger.get("/v1/subscriptions/\(original)")
            #expect(view.json["status"] as? String == "expired")
            #expect(view.json["auto_renew"] as? Bool == false)
            let user = try await ledger.get("/v1/users/u1")
            #expect((user.json["entitlements"] as? [[String: any Sendable]])?.first?["active"] as? Bool == false)
        }
    }

    @Test("a refunded subscription is revoked at the cancellation date")
    func refunded() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.pro.yearly", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: purchase).outcome == "delivered")
            _ = try await ledger.simulator.refund(transactionId: purchase.transactionId)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            let view = try await ledger.get("/v1/subscriptions/\(purchase.transaction.originalTransactionId)")
            #expect(view.json["status"] as? String == "revoked")
        }
    }

    @Test("an upgrade from monthly to yearly: the subscription and the user's entitlement name the yearly plan")
    func upgrade() async throws {
        try await LedgerHarness.with { ledger in
            let (_, monthly) = try await ledger.orderAndBuy(user: "u1", product: "com.example.pro.monthly", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: monthly).outcome == "delivered")
            let original = monthly.transaction.originalTransactionId
            _ = try await ledger.simulator.changeProduct(originalTransactionId: original, to: "com.example.pro.yearly")
            try await ledger.eventually("the upgrade is seen") {
                try await ledger.get("/v1/subscriptions/\(original)").json["product_id"] as? String == "com.example.pro.yearly"
            }
            let entitlements = try await ledger.get("/v1/users/u1").json["entitlements"] as? [[String: any Sendable]]
            #expect(entitlements?.count == 1)
            #expect(entitlements?.first?["product_id"] as? String == "com.example.pro.yearly")
            #expect(entitlements?.first?["active"] as? Bool == true)
        }
    }
}
