import Foundation
import Testing

@testable import AppStore

/// app-store-server-library's decoded payload models: what is inside a JWS, read directly.
@Suite("Decoded signed payloads")
struct SignedPayloadDecodingTests {
    @Test("a decoded transaction reads ids, dates, revocation, price in milliunits and offer")
    func transaction() throws {
        let t = try Fixtures.decode(SignedTransaction.self, "jws-decoded-transaction-autorenew-asslib.json")
        #expect(t.transactionId == "23456")
        #expect(t.originalTransactionId == "12345")
        #expect(t.webOrderLineItemId == "34343")
        #expect(t.bundleId == "com.example")
        #expect(t.productId == "com.example.product")
        #expect(t.subscriptionGroupIdentifier == "55555")
        #expect(t.purchaseDate == 1_698_148_900_000)
        #expect(t.originalPurchaseDate == 1_698_148_800_000)
        #expect(t.expiresDate == 1_698_149_000_000)
        #expect(t.quantity == 1)
        #expect(t.type == .autoRenewable)
        #expect(t.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(t.inAppOwnershipType == .purchased)
        #expect(t.revocationReason == .appIssue)
        #expect(t.revocationDate == 1_698_148_950_000)
        #expect(t.isUpgraded == true)
        #expect(t.offerType == .introductory)
        #expect(t.offerIdentifier == "abc.123")
        #expect(t.rawEnvironment == "LocalTesting" && t.environment == .localTesting)
        #expect(t.transactionReason == .purchase)
        #expect(t.storefront == "USA" && t.storefrontId == "143441")
        #expect(t.price == 10_990 && t.currency == "USD")
        #expect(t.offerDiscountType == .payAsYouGo)
        #expect(t.offerPeriod == "P1Y")
        #expect(t.revocationType == nil)
    }

    @Test("a prorated refund reads its revocation type and percentage")
    func prorated() throws {
        let t = try Fixtures.decode(SignedTransaction.self, "jws-decoded-transaction-revocation-prorated-asslib.json")
        #expect(t.revocationType == .refundProrated)
        #expect(t.revocationPercentage == 50_000)
        #expect(t.price == 10_990)
    }

    @Test("decoded renewal info reads billing retry, grace period, renewal price and crossgrade")
    func renewalInfo() throws {
        let r = try Fixtures.decode(SignedRenewalInfo.self, "jws-decoded-renewalinfo-billing-retry-grace-asslib.json")
        #expect(r.expirationIntent == .customerCancelled)
        #expect(r.originalTransactionId == "12345")
        #expect(r.autoRenewProductId == "com.example.product.2")
        #expect(r.productId == "com.example.product")
        #expect(r.willAutoRenew == true)
        #expect(r.isInBillingRetryPeriod == true)
        #expect(r.priceIncreaseStatus == 0)
        #expect(r.gracePeriodExpiresDate == 1_698_148_900_000)
        #expect(r.offerType == .promotional)
        #expect(r.renewalDate == 1_698_148_850_000)
        #expect(r.renewalPrice == 9_990 && r.currency == "USD")
        #expect(r.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(r.environment == .localTesting)
    }

    @Test("a decoded SUBSCRIBED notification reads type, subtype, uuid and data")
    func subscribed() throws {
        let n = try Fixtures.decode(NotificationV2Payload.self, "notification-v2-decoded-subscribed-initial_buy-asslib.json")
        #expect(n.notificationType == .subscribed)
        #expect(n.rawSubtype == "INITIAL_BUY")
        #expect(n.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(n.signedDate == 1_698_148_900_000)
        #expect(n.data?.appAppleId == 41234)
        #expect(n.data?.bundleVersion == "1.2.3")
        #expect(n.data?.signedTransactionInfo == "signed_transaction_info_value")
        #expect(n.data?.status == .active)
    }

    @Test("a decoded CONSUMPTION_REQUEST keeps its reason")
    func consumptionRequest() throws {
        let n = try Fixtures.decode(NotificationV2Payload.self, "notification-v2-decoded-consumption_request-asslib.json")
        #expect(n.notificationType == .consumptionRequest)
        #expect(n.rawSubtype == nil)
        #expect(n.data?.rawConsumptionRequestReason == "UNINTENDED_PURCHASE")
    }

    @Test("an unknown notification type keeps its raw value")
    func unknownType() throws {
        let n = try JSONDecoder().decode(NotificationV2Payload.self, from: Data(#"{"notificationType":"BRAND_NEW"}"#.utf8))
        #expect(n.rawNotificationType == "BRAND_NEW")
        #expect(n.notificationType == nil)
    }
}

@Suite("App Store Server API bodies")
struct ServerAPIResponseTests {
    @Test("a transaction history page reads revision, hasMore and its signed transactions")
    func history() throws {
        let page = try Fixtures.decode(SignedTransactionPage.self, "api-transaction-history-response-asslib.json")
        #expect(page.revision == "revision_output" && page.hasMore == true)
        #expect(page.bundleId == "com.example" && page.appAppleId == 323232)
        #expect(page.environment == .localTesting)
        #expect(page.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
    }

    @Test("a refund history page reads the same shape")
    func refunds() throws {
        let page = try Fixtures.decode(SignedTransactionPage.self, "api-refund-history-response-asslib.json")
        #expect(page.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
        #expect(page.hasMore == true && page.bundleId == nil)
    }

    @Test("all subscription statuses read groups and active, revoked and expired statuses")
    func statuses() throws {
        let response = try Fixtures.decode(SubscriptionStatusesResponse.self, "api-all-subscription-statuses-response-asslib.json")
        #expect(response.appAppleId == 5_454_545)
        #expect(response.data.map(\.subscriptionGroupIdentifier) == ["sub_group_one", "sub_group_two"])
        #expect(response.data.flatMap(\.lastTransactions).map(\.status) == [.active, .revoked, .expired])
        #expect(response.data[0].lastTransactions[1].originalTransactionId == "5314314134")
    }

    @Test("error bodies read their code and say whether to retry")
    func errors() throws {
        let notFound = try Fixtures.decode(ServerAPIErrorBody.self, "api-error-transaction-id-not-found-asslib.json")
        #expect(notFound.errorCode == 4_040_010 && notFound.errorMessage == "Transaction id not found.")
        #expect(!notFound.isRetryable)
        let rateLimit = try Fixtures.decode(ServerAPIErrorBody.self, "api-error-rate-limit-asslib.json")
        #expect(rateLimit.errorCode == 4_290_000 && rateLimit.isRetryable)
    }
}
