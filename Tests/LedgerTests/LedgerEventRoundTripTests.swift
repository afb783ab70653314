import Foundation
import Testing

@testable import Ledger

/// Every event is stored as its payload's JSON and its type, and read back by type; a type this
/// build does not know is kept as `.unknown` so a newer log still replays.
@Suite("Ledger events round-trip through their stored form")
struct LedgerEventRoundTripTests {
    static let t0 = Given.t0

    /// One example of each kind of event, with every optional field set where there is one.
    static let examples: [LedgerEvent] = [
        .catalogLoaded(CatalogLoaded(
            products: [
                Product(productId: Given.coins, kind: .consumable, grants: ["coins": 100, "gold_coins": 5], priceMinor: 99, currency: "USD"),
                Product(productId: Given.removeAds, kind: .nonConsumable),
            ],
            fileSha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")),
        .orderCreated(Given.order("o-1", quantity: 2, token: "6f1c2a5e-1111-4000-8000-000000000001")),
        .orderFulfilled(OrderFulfilled(orderId: "o-1", transactionId: "1000000218147651")),
        .receiptSubmitted(ReceiptSubmitted(
            submissionId: "sub-1", userId: Given.alice, orderId: "o-1", transactionId: "1000000218147651", kind: .signedTransaction,
            documentSha256: "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752", submittedAtMs: t0)),
        .appleResponded(AppleResponded(
            submissionId: "sub-1", endpoint: "production", url: "https://buy.itunes.apple.com/verifyReceipt", httpStatus: 200,
            status: 21007, latencyMs: 85, startedAtMs: t0, documentSha256: "fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13",
            failure: nil)),
        .verificationPending(VerificationPending(
            submissionId: "sub-1", reason: "timeout", attempt: 2, retryAfterSeconds: 30, nextAttemptAtMs: t0 + 30_000)),
        .deliveryRejected(DeliveryRejected(
            submissionId: "sub-1", userId: Given.bob, code: .ownedByAnotherUser, message: "com.example.removeads belongs to another user")),
        .submissionResolved(SubmissionResolved(submissionId: "sub-1", outcome: "delivered", transactionIds: ["T1", "T2"])),
        .purchaseDelivered(PurchaseDelivered(
            transactionId: "T1", originalTransactionId: "T0", productId: Given.monthly, kind: .autoRenewable, quantity: 1,
            userId: Given.alice, orderId: "o-1", environment: "Sandbox", purchaseDateMs: t0, expiresDateMs: t0 + 30 * Given.day,
            priceMilliunits: 4990, currency: "EUR", appAccountToken: "6f1c2a5e-1111-4000-8000-000000000001",
            appTransactionId: "704289572", isTrial: true, grants: ["gold_coins": 5], submissionId: "sub-1", match: .accountSwitched,
            familyShared: true, storefront: "DEU", billingPlanType: "MONTHLY",
            commitment: Commitment(periodNumber: 1, totalPeriods: 12, priceMilliunits: 59_880, expiresDateMs: t0 + 365 * Given.day))),
        .subscriptionRenewalSeen(SubscriptionRenewalSeen(
            transactionId: "T2", originalTransactionId: "T0", productId: Given.monthly, userId: Given.alice, environment: "Sandbox",
            purchaseDateMs: t0 + 30 * Given.day, expiresDateMs: t0 + 60 * Given.day, isTrial: false, priceMilliunits: 4990,
            currency: "EUR", source: "notification-1", familyShared: true, storefront: "FRA", billingPlanType: "QUARTERLY",
            commitment: Commitment(periodNumber: 2, totalPeriods: nil, priceMilliunits: nil, expiresDateMs: nil))),
        .subscriptionObserved(SubscriptionObserved(
            originalTransactionId: "T0", environment: "Sandbox",
            entries: [SubscriptionEntry(
                transactionId: "T2", productId: Given.monthly, purchaseDateMs: t0, expiresDateMs: nil,
                cancellationDateMs: t0 + Given.day, isTrial: true, isUpgraded: true, billingPlanType: "MONTHLY",
                commitment: Commitment(periodNumber: 2, totalPeriods: 12, priceMilliunits: 59_880, expiresDateMs: t0 + 365 * Given.day),
                priceMilliunits: 4990, currency: "EUR")],
            renewal: RenewalObservation(
                observedAtMs: t0, autoRenew: false, autoRenewProductId: Given.yearly, inBillingRetry: true,
                gracePeriodExpiresMs: t0 + 16 * Given.day),
            source: "sub-1")),
        .ownershipClaimed(OwnershipClaimed(
            originalTransactionId: "T0", productId: Given.removeAds, kind: .nonConsumable, userId: Given.alice,
            transactionId: "T1", environment: "Production")),
        .ownershipTransferred(OwnershipTransferred(
            originalTransactionId: "T0", productId: Given.removeAds, kind: .nonConsumable, fromUserId: Given.alice,
            toUserId: Given.bob, transactionId: "T3", submissionId: "sub-2", environment: "Production")),
        .appleNotificationReceived(AppleNotificationReceived(
            notificationId: "002e14d5-51f5-4503-b5a8-c3a1af68eb20", version: "v2", notificationType: "CONSUMPTION_REQUEST",
            subtype: "SUMMARY", environment: "Sandbox", transactionId: "T1", originalTransactionId: "T0",
            consumptionRequestReason: "UNINTENDED_PURCHASE", documentSha256: "0a0b", receivedAtMs: t0)),
        .purchaseRefunded(PurchaseRefunded(
            transactionId: "T1", originalTransactionId: "T0", productId: Given.coins, kind: .consumable, quantity: 3,
            userId: Given.alice, environment: "Production", grants: ["coins": 300], refundedAtMs: t0 + Given.day, reason: 1,
            revocation: "refund", source: "notification-2", rawRevocationType: "REFUND_PRORATED", revocationPercentage: 67_932,
            refundedFractionMilli: 67_932, upgraded: true, grantsTakenBack: ["coins": 204])),
        .balanceSpent(BalanceSpent(
            userId: Given.alice, unit: "coins", amount: 130, spendId: "s-1", reason: "hint", balanceAfter: 70,
            attributions: [SpendAttribution(transactionId: "T1", amount: 100), SpendAttribution(transactionId: "T2", amount: 30)], spentAtMs: t0)),
        .consumptionConsentRecorded(ConsumptionConsentRecorded(userId: Given.alice, consumptionData: true, recordedAtMs: t0)),
        .reconciliationCompleted(ReconciliationCompleted(
            environment: "Production", fromMs: t0, toMs: t0 + Given.day, notificationsSeen: 3, notificationsRecorded: 1, documentSha256List: ["0a", "0b"])),
        .consumptionInformationSent(ConsumptionInformationSent(
            notificationId: "n-1", transactionId: "T1", userId: Given.alice, consumptionPercentage: 40_000, deliveryStatus: "DELIVERED",
            refundPreference: "DECLINE", sampleContentProvided: false, documentSha256: "0c", httpStatus: 202, sentAtMs: t0)),
        .consumptionInformationWithheld(ConsumptionInformationWithheld(
            notificationId: "n-2", transactionId: "T1", userId: nil, reason: "no_consent", appleErrorCode: 4_000_035, atMs: t0)),
        .appleOrderLookedUp(AppleOrderLookedUp(orderId: "MK5TTTVWJH", environment: "Production", transactionIds: ["T1"], documentSha256: "0d", atMs: t0)),
        .refundReversed(RefundReversed(
            refund: PurchaseRefunded(
                transactionId: "T1", originalTransactionId: "T0", productId: Given.coins, kind: .consumable, quantity: 1,
                userId: Given.alice, environment: "Production", grants: ["coins": 100], refundedAtMs: t0, reason: 0,
                revocation: "refund", source: "n-3"),
            reversedAtMs: t0 + Given.day, source: "n-4")),
        .transactionInfoRecorded(TransactionInfoRecorded(
            transactionId: "T1", originalTransactionId: "T0", environment: "Production", storefront: "GBR", priceMilliunits: 4990,
            currency: "GBP", documentSha256: "0e", recordedAtMs: t0, source: "get-transaction-info")),
        .pricePointsRefreshed(PricePointsRefreshed(
            productId: Given.coins, appleId: "6444000001", kind: .subscription, documentSha256List: ["0f", "10"],
            points: [
                .init(territory: "USA", currency: "USD", customerPriceMinor: 99, proceedsMinor: 70, proceedsYear2Minor: 84),
                .init(territory: "JPN", currency: "JPY", customerPriceMinor: 160, proceedsMinor: 102),
            ],
            refreshedAtMs: t0)),
    ]

    @Test("the examples cover every kind of event once")
    func examplesCoverEveryKind() {
        let types = Self.examples.map { $0.type }
        #expect(Set(types).count == 24)
        #expect(types.count == 24)
        #expect(Self.examples.allSatisfy { $0.payload != nil })
    }

    @Test("an event read back from its type and encoded payload equals the original", arguments: LedgerEventRoundTripTests.examples)
    func roundTrip(event: LedgerEvent) throws {
        let payload = try #require(event.payload)
        let decoded = try LedgerEvent(type: event.type, payload: try payload.encoded())
        #expect(decoded == event)
    }

    @Test("payloads are stored with snake_case keys, sorted, grant units as written")
    func storedForm() throws {
        let delivered = try #require(Self.examples.first { $0.asDelivered != nil }?.payload)
        let json = String(decoding: try delivered.encoded(), as: UTF8.self)
        #expect(json.contains(#""original_transaction_id":"T0""#))
        #expect(json.contains(#""price_milliunits":4990"#))
        #expect(json.contains(#""grants":{"gold_coins":5}"#))
        #expect(json.contains(#""match":"account_switched""#))
        #expect(!json.contains("transactionId"))
        #expect(json.hasPrefix(#"{"app_account_token":"#))
        #expect(json.contains(#""storefront":"DEU""#))
    }

    @Test("a delivery recorded before storefronts were has none, and Get Transaction Info's answer is stored in snake_case")
    func storefrontFields() throws {
        let old = #"{"transaction_id":"T1","original_transaction_id":"T1","product_id":"p","kind":"consumable","quantity":1,"user_id":"u","environment":"Production","is_trial":false,"grants":{},"submission_id":"s","match":"no_order"}"#
        let delivered = try #require(try LedgerEvent(type: PurchaseDelivered.eventType, payload: Data(old.utf8)).asDelivered)
        #expect(delivered.storefront == nil)
        let info = try #require(Self.examples.first { $0.type == TransactionInfoRecorded.eventType }?.payload)
        let json = String(decoding: try info.encoded(), as: UTF8.self)
        #expect(json == #"{"currency":"GBP","document_sha256":"0e","environment":"Production","original_transaction_id":"T0","price_milliunits":4990,"recorded_at_ms":1700000000000,"source":"get-transaction-info","storefront":"GBR","transaction_id":"T1"}"#)
    }

    @Test("price points are stored in snake_case, minor units, a missing proceeds_year2_minor left out")
    func pricePointsStoredForm() throws {
        let refreshed = try #require(Self.examples.first { $0.type == PricePointsRefreshed.eventType }?.payload)
        let json = String(decoding: try refreshed.encoded(), as: UTF8.self)
        #expect(json.contains(#""document_sha256_list":["0f","10"]"#))
        #expect(json.contains(#"{"currency":"USD","customer_price_minor":99,"proceeds_minor":70,"proceeds_year2_minor":84,"territory":"USA"}"#))
        #expect(json.contains(#"{"currency":"JPY","customer_price_minor":160,"proceeds_minor":102,"territory":"JPN"}"#))
        #expect(json.contains(#""kind":"subscription""#))
        #expect(json.contains(#""refreshed_at_ms":1700000000000"#))
    }

    @Test("an event type this build does not know is kept as unknown")
    func unknownType() throws {
        let event = try LedgerEvent(type: "SubscriptionPaused", payload: Data(#"{"transaction_id":"T1"}"#.utf8))
        #expect(event == .unknown(type: "SubscriptionPaused"))
        #expect(event.type == "SubscriptionPaused")
        #expect(event.payload == nil)
    }

    @Test("a known type tolerates fields it does not know, and refuses a payload missing its own")
    func payloadFields() throws {
        let extra = try LedgerEvent(type: "OrderFulfilled", payload: Data(#"{"order_id":"o-1","transaction_id":"T1","added_later":true}"#.utf8))
        #expect(extra == .orderFulfilled(OrderFulfilled(orderId: "o-1", transactionId: "T1")))
        #expect(throws: (any Error).self) {
            _ = try LedgerEvent(type: "OrderFulfilled", payload: Data(#"{"order_id":"o-1"}"#.utf8))
        }
    }
}
