import Foundation
import Testing

@testable import AppStore

@Suite("App Store Server Notifications v1")
struct NotificationV1Tests {
    func notification(_ name: String) throws -> NotificationV1 {
        try NotificationV1(jsonBytes: try Fixtures.data(name))
    }

    @Test("CANCEL reads the top-level cancellation date and the iOS 6 latest_expired_receipt_info")
    func cancel() throws {
        let n = try notification("notification-v1-cancel-latest_expired_receipt_info-monza.json")
        #expect(n.notificationType == "CANCEL")
        #expect(n.environmentRaw == "PROD")
        #expect(n.environment == .production)
        #expect(n.autoRenewStatus == false)
        #expect(n.cancellationDate == 1_521_757_701_000)
        #expect(n.webOrderLineItemID == "720000051999737")
        let expired = try #require(n.latestExpiredReceiptInfo.first)
        #expect(expired.transactionID == "720000240377671")
        #expect(expired.originalTransactionID == "720000238499386")
        #expect(expired.bundleID == "com.bundle.id")
        #expect(expired.cancellationReason == .other)
        #expect(expired.cancellationDate == 1_521_757_701_000)
        #expect(expired.expiresDate == 1_551_912_249_000)
        #expect(n.transactions.map(\.transactionID) == ["720000240377671"])
        #expect(n.isAuthentic(sharedSecret: "password"))
        #expect(!n.isAuthentic(sharedSecret: "passwore"))
        #expect(!n.description.contains("password"))
    }

    @Test("INITIAL_BUY reads latest_receipt_info given as one object")
    func initialBuy() throws {
        let n = try notification("notification-v1-initial_buy-monza.json")
        #expect(n.notificationType == "INITIAL_BUY")
        #expect(n.environment == .sandbox)
        #expect(n.autoRenewStatus == true)
        #expect(n.autoRenewProductID == "product_id.quarterly")
        #expect(n.latestReceiptInfo.count == 1)
        let item = n.latestReceiptInfo[0]
        #expect(item.transactionID == "1000000383185294")
        #expect(item.productID == "product_id.annual")
        #expect(item.expiresDate == 1_521_159_784_000)
        #expect(item.purchaseDate == 1_521_156_184_000)
        #expect(item.bundleID == "co.bundle.id")
    }

    @Test("DID_CHANGE_RENEWAL_PREF shows a crossgrade: renewing into another product")
    func renewalPref() throws {
        let n = try notification("notification-v1-did_change_renewal_pref-monza.json")
        #expect(n.notificationType == "DID_CHANGE_RENEWAL_PREF")
        #expect(n.autoRenewProductID == "product_id.quarterly")
        #expect(n.latestReceiptInfo.first?.productID == "product_id.annual")
        #expect(n.latestReceiptInfo.first?.transactionID == "1000000383196805")
        #expect(n.latestReceiptInfo.first?.expiresDate == 1_521_168_035_000)
    }

    @Test("RENEWAL with unified_receipt holds 22 renewals, newest first, and pending renewal info")
    func renewalUnified() throws {
        let n = try notification("notification-v1-renewal-unified_receipt-22-lri-monza.json")
        #expect(n.notificationType == "RENEWAL")
        #expect(n.bundleID == "co.bundle.id")
        #expect(n.bundleVersion == "84")
        let unified = try #require(n.unifiedReceipt)
        #expect(unified.status == .valid)
        #expect(unified.environment == .sandbox)
        #expect(n.transactions.count == 22)
        #expect(n.transactions.first?.transactionID == "1000000707558300")
        #expect(n.transactions.last?.transactionID == "1000000704619139")
        #expect(n.transactions.first?.expiresDate == 1_594_910_502_000)
        #expect(n.transactions.first?.subscriptionGroupIdentifier == "21948041")
        #expect(Set(n.transactions.compactMap(\.originalTransactionID)) == ["1000000715982567"])
        #expect(unified.pendingRenewalInfo.first?.autoRenewStatus == true)
        #expect(!n.isAuthentic(sharedSecret: "secret"))
    }

    @Test("DID_CHANGE_RENEWAL_STATUS holds 54 transactions, 4 upgraded without a cancellation date")
    func renewalStatus() throws {
        let n = try notification("notification-v1-did_change_renewal_status-54-lri-is_upgraded-imdhemy.json")
        #expect(n.notificationType == "DID_CHANGE_RENEWAL_STATUS")
        #expect(n.autoRenewStatus == false)
        #expect(n.autoRenewStatusChangeDate == 1_606_293_002_000)
        #expect(n.environment == .production)
        #expect(n.transactions.count == 54)
        let upgraded = n.transactions.filter { $0.isUpgraded == true }
        #expect(upgraded.map(\.transactionID) == ["1000000739321864", "1000000739325339", "1000000739325308", "1000000739325323"])
        #expect(upgraded.allSatisfy { $0.cancellationDate == nil })
        #expect(n.unifiedReceipt?.pendingRenewalInfo.first?.expirationIntent == .customerCancelled)
    }

    @Test("DID_RENEW with unified_receipt keeps ownership type, group and the unknown deprecation field")
    func didRenew() throws {
        let n = try notification("notification-v1-did_renew-unified_receipt-aporat.json")
        #expect(n.notificationType == "DID_RENEW")
        #expect(n.environment == .production)
        #expect(n.originalTransactionID == "100000000000000")
        #expect(n.bundleID == "my.app")
        #expect(n.unknownFields["deprecation"] == .string("Mon, 1 Jan 2030 00:00:00 GMT"))
        let item = try #require(n.transactions.first)
        #expect(item.transactionID == "100000000000001")
        #expect(item.inAppOwnershipType == .purchased)
        #expect(item.subscriptionGroupIdentifier == "99999999")
        #expect(item.expiresDate == 1_747_636_952_000)
        #expect(n.isAuthentic(sharedSecret: "dummy_shared_secret"))
    }
}
