import Foundation
import Primitives
import Testing

@testable import AppStore

/// Every payload shape app-store-server-library's test resources show (Tests/Fixtures/apple,
/// SOURCES.md), read the way Apple's libraries read them; values Apple adds later kept as sent.
@Suite("Notification shapes: every block names the app, nothing Apple adds later is refused")
struct NotificationShapeTests {
    struct Shape: Sendable, CustomTestStringConvertible {
        var fixture: String
        var block: NotificationAddressee.Block
        var appAppleId: Int64
        var environment: String
        var type: NotificationTypeV2
        var subtype: NotificationSubtypeV2?
        var testDescription: String { fixture }
    }

    static let shapes: [Shape] = [
        Shape(fixture: "notification-v2-decoded-subscribed-initial_buy-asslib.json", block: .data, appAppleId: 41234,
              environment: "LocalTesting", type: .subscribed, subtype: .initialBuy),
        Shape(fixture: "notification-v2-decoded-consumption_request-asslib.json", block: .data, appAppleId: 41234,
              environment: "LocalTesting", type: .consumptionRequest, subtype: nil),
        Shape(fixture: "notification-v2-decoded-renewal_extension-summary-asslib.json", block: .summary, appAppleId: 41234,
              environment: "LocalTesting", type: .renewalExtension, subtype: .summary),
        Shape(fixture: "notification-v2-decoded-external_purchase_token-asslib.json", block: .externalPurchaseToken, appAppleId: 55555,
              environment: "Production", type: .externalPurchaseToken, subtype: .unreported),
        Shape(fixture: "notification-v2-decoded-external_purchase_token-sandbox-asslib.json", block: .externalPurchaseToken,
              appAppleId: 55555, environment: "Sandbox", type: .externalPurchaseToken, subtype: .unreported),
        Shape(fixture: "notification-v2-decoded-rescind_consent-asslib.json", block: .appData, appAppleId: 41234,
              environment: "LocalTesting", type: .rescindConsent, subtype: nil),
    ]

    @Test("each of Apple's notification shapes names its app and environment from the block it carries", arguments: shapes)
    func addressee(_ shape: Shape) throws {
        let payload = try Fixtures.decode(NotificationV2Payload.self, shape.fixture)
        let envelope = try Fixtures.decode(NotificationEnvelope.self, shape.fixture)
        #expect(payload.addressee.block == shape.block)
        #expect(payload.addressee.bundleId == "com.example")
        #expect(payload.addressee.appAppleId == shape.appAppleId)
        #expect(payload.addressee.rawEnvironment == shape.environment)
        #expect(payload.notificationType == shape.type)
        #expect(payload.subtype == shape.subtype)
        #expect(payload.signedDate == 1_698_148_900_000)
        // The envelope, which refuses nothing, reads the same.
        #expect(envelope.addressee == payload.addressee)
        #expect(envelope.rawNotificationType == payload.rawNotificationType && envelope.rawSubtype == payload.rawSubtype)
        #expect(envelope.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(envelope.signedDate == payload.signedDate)
    }

    @Test("the summary, external purchase token and app data blocks read their own fields")
    func blocks() throws {
        let summary = try #require(try Fixtures.decode(NotificationV2Payload.self, "notification-v2-decoded-renewal_extension-summary-asslib.json").summary)
        #expect(summary.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.succeededCount == 5 && summary.failedCount == 2)
        #expect(summary.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        let token = try #require(try Fixtures.decode(NotificationV2Payload.self, "notification-v2-decoded-external_purchase_token-sandbox-asslib.json").externalPurchaseToken)
        #expect(token.externalPurchaseId == "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e")
        #expect(token.tokenCreationDate == 1_698_148_950_000)
        #expect(token.rawEnvironment == "Sandbox")
        let consent = try Fixtures.decode(NotificationV2Payload.self, "notification-v2-decoded-rescind_consent-asslib.json")
        #expect(consent.data == nil)
        #expect(consent.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
        #expect(consent.appData?.environment == .localTesting)
    }

    @Test("a payload with none of the blocks names no app; the first block present wins, as in Apple's libraries")
    func noBlock() throws {
        let none = try JSONDecoder().decode(NotificationV2Payload.self, from: Data(#"{"notificationType":"TEST"}"#.utf8))
        #expect(none.addressee == NotificationAddressee(data: nil, summary: nil, externalPurchaseToken: nil, appData: nil))
        #expect(none.addressee.block == nil && none.addressee.bundleId == nil)
        let both = Data(#"{"data":{"bundleId":"a","environment":"Sandbox"},"appData":{"bundleId":"b","environment":"Production"}}"#.utf8)
        #expect(try JSONDecoder().decode(NotificationV2Payload.self, from: both).addressee.bundleId == "a")
        #expect(try JSONDecoder().decode(NotificationEnvelope.self, from: both).addressee.bundleId == "a")
        let nullData = Data(#"{"data":null,"appData":{"bundleId":"b","environment":"Sandbox"}}"#.utf8)
        #expect(try JSONDecoder().decode(NotificationV2Payload.self, from: nullData).addressee.block == .appData)
        #expect(try JSONDecoder().decode(NotificationEnvelope.self, from: nullData).addressee.block == .appData)
    }

    @Test("the envelope reads a notification whose content is refused, and names no bundle for a block that is no object")
    func envelopeOfRefusedShape() throws {
        let refused = Data(#"{"notificationType":"DID_RENEW","signedDate":"soon","data":{"bundleId":"com.example","environment":"Sandbox","status":"ACTIVE"}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(NotificationV2Payload.self, from: refused) }
        let envelope = try JSONDecoder().decode(NotificationEnvelope.self, from: refused)
        #expect(envelope.rawNotificationType == "DID_RENEW")
        #expect(envelope.signedDate == nil)
        #expect(envelope.addressee.bundleId == "com.example" && envelope.addressee.environment == .sandbox)
        let notAnObject = try JSONDecoder().decode(NotificationEnvelope.self, from: Data(#"{"data":5}"#.utf8))
        #expect(notAnObject.addressee.block == .data && notAnObject.addressee.bundleId == nil)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(NotificationEnvelope.self, from: Data("[1]".utf8)) }
    }

    @Test("dates with a fraction of a millisecond, as Xcode's StoreKit testing signs them, are read rounded down")
    func fractionalMilliseconds() throws {
        let transaction = try JSONDecoder().decode(SignedTransaction.self, from: try Self.payload(of: "jws-transaction-xcode-fractional-ms-asslib.jws"))
        #expect(transaction.purchaseDate == 1_697_679_936_049)
        #expect(transaction.originalPurchaseDate == 1_697_679_936_049)
        #expect(transaction.expiresDate == 1_700_358_336_049)
        #expect(transaction.signedDate == 1_697_679_936_056)
        #expect(transaction.environment == .xcode)
        let renewal = try JSONDecoder().decode(SignedRenewalInfo.self, from: try Self.payload(of: "jws-renewalinfo-xcode-fractional-ms-asslib.jws"))
        #expect(renewal.renewalDate == 1_700_358_336_049)
        #expect(renewal.recentSubscriptionStartDate == 1_697_679_936_049)
        #expect(renewal.signedDate == 1_697_679_936_711)
        let notification = Data(#"{"notificationType":"TEST","signedDate":1698148900000.5,"externalPurchaseToken":{"tokenCreationDate":1698148950000.25}}"#.utf8)
        let payload = try JSONDecoder().decode(NotificationV2Payload.self, from: notification)
        #expect(payload.signedDate == 1_698_148_900_000)
        #expect(payload.externalPurchaseToken?.tokenCreationDate == 1_698_148_950_000)
        #expect(try JSONDecoder().decode(NotificationEnvelope.self, from: notification).signedDate == 1_698_148_900_000)
        // Whole milliseconds, and dates before 1970, read as before.
        let whole = try JSONDecoder().decode(SignedTransaction.self, from: Data(#"{"purchaseDate":-62135769600000,"expiresDate":null}"#.utf8))
        #expect(whole.purchaseDate == -62_135_769_600_000 && whole.expiresDate == nil)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SignedTransaction.self, from: Data(#"{"purchaseDate":"yesterday"}"#.utf8))
        }
    }

    @Test("Apple's transaction and renewal info fixtures read their billing plan and commitment")
    func billingPlans() throws {
        let transaction = try Fixtures.decode(SignedTransaction.self, "jws-decoded-transaction-autorenew-asslib.json")
        #expect(transaction.rawBillingPlanType == "MONTHLY" && transaction.billingPlanType == .monthly)
        #expect(transaction.commitmentInfo == TransactionCommitmentInfo(
            billingPeriodNumber: 3, totalBillingPeriods: 12, commitmentPrice: 119_880, commitmentExpiresDate: 1_698_150_000_000))
        let renewal = try Fixtures.decode(SignedRenewalInfo.self, "jws-decoded-renewalinfo-billing-retry-grace-asslib.json")
        #expect(renewal.renewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentAutoRenewProductId == "com.example.product.commitment")
        #expect(renewal.commitmentInfo?.commitmentWillAutoRenew == true)
        #expect(renewal.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentRenewalDate == 1_698_149_500_000)
        #expect(renewal.commitmentInfo?.commitmentRenewalPrice == 9990)
        // Both survive a round trip through their own encoding.
        #expect(try JSONDecoder().decode(SignedTransaction.self, from: try JSONEncoder().encode(transaction)) == transaction)
        #expect(try JSONDecoder().decode(SignedRenewalInfo.self, from: try JSONEncoder().encode(renewal)) == renewal)
    }

    @Test("values Apple adds later are kept verbatim, typed as unknown, and survive a round trip")
    func unknownValues() throws {
        let json = #"""
            {"transactionId":"1","type":"Bundle Subscription","inAppOwnershipType":"BORROWED","revocationReason":7,
             "revocationType":"REFUND_STORE_CREDIT","revocationPercentage":12345,"offerType":9,"offerDiscountType":"BUY_ONE_GET_ONE",
             "transactionReason":"GIFT","billingPlanType":"QUARTERLY","environment":"Staging","advancedCommerceInfo":{"x":1}}
            """#
        let transaction = try JSONDecoder().decode(SignedTransaction.self, from: Data(json.utf8))
        #expect(transaction.type == nil && transaction.rawType == "Bundle Subscription")
        #expect(transaction.revocationType == nil && transaction.rawRevocationType == "REFUND_STORE_CREDIT")
        #expect(transaction.revocationReason == nil && transaction.rawRevocationReason == 7)
        #expect(transaction.offerType == nil && transaction.rawOfferType == 9)
        #expect(transaction.offerDiscountType == nil && transaction.rawOfferDiscountType == "BUY_ONE_GET_ONE")
        #expect(transaction.transactionReason == nil && transaction.rawTransactionReason == "GIFT")
        #expect(transaction.billingPlanType == nil && transaction.rawBillingPlanType == "QUARTERLY")
        #expect(transaction.environment == nil && transaction.rawEnvironment == "Staging")
        let encoded = try JSONEncoder().encode(transaction)
        #expect(try JSONDecoder().decode(SignedTransaction.self, from: encoded) == transaction)
        let text = String(decoding: encoded, as: UTF8.self)
        for value in [#""REFUND_STORE_CREDIT""#, #""QUARTERLY""#, #""Bundle Subscription""#, #""offerType":9"#] {
            #expect(text.contains(value), "\(value) in \(text)")
        }

        let renewal = try JSONDecoder().decode(SignedRenewalInfo.self, from: Data(#"{"renewalBillingPlanType":"WEEKLY","offerType":8,"expirationIntent":42}"#.utf8))
        #expect(renewal.renewalBillingPlanType == nil && renewal.rawRenewalBillingPlanType == "WEEKLY")
        #expect(renewal.offerType == nil && renewal.expirationIntent == nil && renewal.rawExpirationIntent == 42)
        #expect(try JSONDecoder().decode(SignedRenewalInfo.self, from: try JSONEncoder().encode(renewal)) == renewal)

        let notification = try JSONDecoder().decode(
            NotificationV2Payload.self,
            from: Data(#"{"notificationType":"SUBSCRIPTION_PAUSED","subtype":"BY_CUSTOMER","data":{"bundleId":"com.example","environment":"Sandbox","status":9}}"#.utf8))
        #expect(notification.notificationType == nil && notification.rawNotificationType == "SUBSCRIPTION_PAUSED")
        #expect(notification.subtype == nil && notification.rawSubtype == "BY_CUSTOMER")
        #expect(notification.data?.status == nil && notification.data?.rawStatus == 9)
        #expect(try JSONDecoder().decode(NotificationV2Payload.self, from: try JSONEncoder().encode(notification)) == notification)
    }

    @Test("the environment a JWS claims is read from a transaction's field or from whichever block a notification carries")
    func claimedEnvironment() throws {
        func unsigned(_ payload: String) -> String {
            Base64URL.encode(Data(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Data(payload.utf8)) + "." + Base64URL.encode(Data([1, 2, 3]))
        }
        func claimed(_ fixture: String) throws -> AppStoreEnvironment? {
            SignedDataVerifier.claimedEnvironment(of: unsigned(String(decoding: try Fixtures.data(fixture), as: UTF8.self)))
        }
        #expect(try claimed("notification-v2-decoded-external_purchase_token-sandbox-asslib.json") == .sandbox)
        #expect(try claimed("notification-v2-decoded-external_purchase_token-asslib.json") == .production)
        #expect(try claimed("notification-v2-decoded-rescind_consent-asslib.json") == .localTesting)
        #expect(try claimed("notification-v2-decoded-renewal_extension-summary-asslib.json") == .localTesting)
        #expect(SignedDataVerifier.claimedEnvironment(of: unsigned(#"{"appData":{"environment":"Sandbox"}}"#)) == .sandbox)
        #expect(SignedDataVerifier.claimedEnvironment(of: unsigned(#"{"environment":"Sandbox","transactionId":"1"}"#)) == .sandbox)
        #expect(SignedDataVerifier.claimedEnvironment(of: unsigned(#"{"notificationType":"TEST"}"#)) == nil)
        #expect(SignedDataVerifier.claimedEnvironment(of: "not a jws") == nil)
    }

    /// The payload JSON of a compact JWS fixture, exactly as signed.
    static func payload(of fixture: String) throws -> Data {
        let parts = try Fixtures.text(fixture).split(separator: ".")
        return try #require(Base64URL.decode(parts[1]))
    }
}
