import Foundation
import Testing

@testable import AppStore

@Suite("verifyReceipt response bodies")
struct VerifyReceiptResponseTests {
    @Test("an iOS 7 subscription body with a trial reads its in_app, latest_receipt_info and pending renewal")
    func trialWithPendingRenewal() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-ios7-subscription-trial-pending_renewal-monza.json")
        #expect(body.status == .valid)
        #expect(body.environment == .sandbox)
        #expect(body.bundleID == "com.example.app")
        let receipt = try #require(body.receipt)
        #expect(receipt.style == .iOS7)
        #expect(receipt.applicationVersion == "58")
        #expect(receipt.creationDate == 1_466_128_466_000)
        #expect(receipt.inApp.count == 1)
        let item = receipt.inApp[0]
        #expect(item.transactionID == "1000000218147651")
        #expect(item.originalTransactionID == "1000000218147500")
        #expect(item.webOrderLineItemID == "1000000032727764")
        #expect(item.purchaseDate == 1_466_127_148_000)
        #expect(item.expiresDate == 1_466_127_448_000)
        #expect(item.isTrialPeriod == false)
        #expect(item.quantity == 1)
        #expect(item.unknownFields.isEmpty)
        // Apple repeats a transaction id in latest_receipt_info, once without expires_date.
        #expect(body.latestReceiptInfo.map(\.transactionID) == ["1000000218147501", "1000000218147501", "1000000218147500"])
        #expect(body.latestReceiptInfo[0].expiresDate == nil)
        #expect(body.latestReceiptInfo[1].expiresDate == 1_466_127_147_996)
        #expect(body.latestReceiptInfo.allSatisfy { $0.isTrialPeriod == true && $0.isInIntroOfferPeriod == true })
        #expect(body.latestReceipt == "base 64 string")
        let renewal = try #require(body.pendingRenewalInfo.first)
        #expect(renewal.autoRenewStatus == false)
        #expect(renewal.autoRenewProductID == "renew_product_id")
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.isInBillingRetryPeriod == false)
        #expect(renewal.originalTransactionID == "1000000218147500")
    }

    @Test("a refunded subscription carries cancellation date and reason on in_app and latest_receipt_info")
    func cancellation() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-ios7-subscription-cancellation_reason-monza.json")
        let item = try #require(body.receipt?.inApp.first)
        #expect(item.cancellationDate == 1_466_127_848_000)
        #expect(item.cancellationReason == .other)
        #expect(item.isCancelled)
        let latest = try #require(body.latestReceiptInfo.first)
        #expect(body.latestReceiptInfo.count == 1)
        #expect(latest.transactionID == "1000000218147500")
        #expect(latest.cancellationDate == 1_466_127_848_000)
        #expect(latest.cancellationReasonRaw == "0")
        #expect(body.pendingRenewalInfo.isEmpty)
    }

    @Test("a 21003 body still decodes its receipt, and its status says it must not be used")
    func status21003() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-status-21003-with-receipt-monza.json")
        #expect(body.status == .notAuthenticated)
        #expect(body.status.classify(isRetryable: body.isRetryable) == .permanent)
        #expect(body.bundleID == "com.example.bad_app")
        #expect(body.receipt?.inApp.first?.productID == "com.example.bad_product_id")
    }

    @Test("an iOS 6 style 21006 body reads bid, bvrs, millisecond expires_date and latest_expired_receipt_info")
    func iOS6Expired() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-ios6-status-21006-latest_expired_receipt_info-venice.json")
        #expect(body.status == .subscriptionExpired)
        #expect(body.status.classify(isRetryable: nil) == .expiredButDecoded)
        #expect(body.environmentRaw == nil)
        let receipt = try #require(body.receipt)
        #expect(receipt.style == .iOS6)
        #expect(receipt.bundleID == "com.foo.bar")
        #expect(receipt.applicationVersion == "68")
        #expect(receipt.appItemID == "1387514950")
        let transaction = try #require(receipt.inApp.first)
        #expect(transaction.transactionID == "140000527258824")
        #expect(transaction.expiresDate == 1_550_386_188_000)
        #expect(transaction.purchaseDate == 1_549_781_388_000)
        #expect(transaction.isTrialPeriod == true)
        #expect(transaction.itemID == "1450637621")
        #expect(transaction.unknownFields["unique_identifier"] == .string("00008020-001624500AF2002E"))
        let expired = try #require(body.latestExpiredReceiptInfo.first)
        #expect(body.latestExpiredReceiptInfo.count == 1)
        #expect(expired.bundleVersion == "13")
        #expect(expired.productID == "com.foo.product1")
        #expect(body.autoRenewStatus == false)
        #expect(body.autoRenewProductID == "com.foo.product1")
        #expect(body.expirationIntent == .customerCancelled)
        #expect(body.isInBillingRetryPeriod == false)
    }

    @Test("a 2014 body without _ms dates reads expires_date from its Etc/GMT text")
    func dateTextOnly() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-ios7-autorenew-off-pending_renewal-venice.json")
        #expect(body.environment == .production)
        #expect(body.receipt?.receiptType == "Production")
        #expect(body.receipt?.appItemID == "7654321")
        #expect(body.receipt?.expirationDate == 1_401_924_047_883)
        let item = try #require(body.receipt?.inApp.first)
        #expect(item.transactionID == "1000000070107111")
        #expect(item.expiresDate == Fixtures.ms(2014, 6, 28, 14, 47, 53))
        #expect(body.latestReceiptInfo.isEmpty)
        #expect(body.pendingRenewalInfo.first?.originalTransactionID == "37xxxxxxxxx89")
        #expect(body.pendingRenewalInfo.first?.autoRenewStatus == false)
    }

    @Test("numbers and booleans where Apple sends strings are accepted")
    func numericTypes() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-ios7-sandbox-multi-product-numeric-types-aporat.json")
        #expect(body.environment == .sandbox)
        #expect(body.bundleID == "com.myapp")
        #expect(body.receipt?.applicationVersion == "1")
        #expect(body.receipt?.appItemID == "11202513425662")
        #expect(body.receipt?.inApp.map(\.transactionID) == ["1000000156455961", "1000000156014803"])
        #expect(body.receipt?.inApp.map(\.productID) == ["myapp.1", "myapp.2"])
        #expect(body.latestReceiptInfo.count == 2)
        let first = body.latestReceiptInfo[0]
        #expect(first.transactionID == "1000000104232856")
        #expect(first.originalTransactionID == "1000000093384828")
        #expect(first.webOrderLineItemID == "1000000027948608")
        #expect(first.expiresDate == 1_394_619_485_000)
        #expect(first.isTrialPeriod == false)
        #expect(first.quantity == 1)
        #expect(body.latestReceiptInfo[1].purchaseDate == 1_396_071_456_569)
        #expect(body.pendingRenewalInfo.first?.autoRenewStatus == true)
    }

    @Test("the 42-renewal body keeps all 42 in_app items unsorted and the newest in latest_receipt_info")
    func fortyTwo() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-ios7-subscription-42-in_app-monthly-yearly-imdhemy.json")
        let inApp = try #require(body.receipt?.inApp)
        #expect(inApp.count == 42)
        #expect(inApp.first?.transactionID == "1000000739289145")
        #expect(inApp.last?.transactionID == "1000000739307078")
        #expect(Set(inApp.compactMap(\.originalTransactionID)) == ["1000000723811158"])
        #expect(Set(inApp.map(\.productID)) == ["one_month_subscription", "one_year_subscription"])
        let dates = inApp.compactMap(\.purchaseDate)
        #expect(dates.count == 42)
        #expect(dates != dates.sorted())
        let latest = try #require(body.latestReceiptInfo.first)
        #expect(body.latestReceiptInfo.count == 1)
        #expect(latest.transactionID == "1000000767477815")
        #expect(latest.inAppOwnershipType == .purchased)
        #expect(latest.subscriptionGroupIdentifier == "20667927")
        #expect(latest.expiresDate == 1_611_147_900_000)
        #expect(body.receipt?.receiptType == "ProductionSandbox")
        #expect(body.environment == .production)
        #expect(body.pendingRenewalInfo.first?.productID == "month_premium")
    }

    @Test("a 21007 body with a full receipt says: ask the sandbox")
    func status21007() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-status-21007-with-body-swifty.json")
        #expect(body.status == .sandboxReceiptInProduction)
        #expect(body.status.classify(isRetryable: nil) == .wrongEnvironment(ask: .sandbox))
        #expect(body.bundleID == "com.swiftyreceiptvalidator")
        #expect(body.receipt?.inApp.first?.transactionID == "1000000528099649")
        #expect(body.latestReceiptInfo.first?.transactionID == "1000000528099637")
    }

    @Test("a bare 21002 body decodes to its status alone")
    func status21002() throws {
        let body = try Fixtures.verifyReceipt("verifyreceipt-status-21002-aporat.json")
        #expect(body.status == .malformedReceiptData)
        #expect(body.receipt == nil)
        #expect(body.latestReceiptInfo.isEmpty)
        #expect(body.status.classify(isRetryable: nil) == .retryLater)
    }

    @Test("21100-21199 is retry later only when the body says is-retryable", arguments: [
        (#"{"status":21199}"#, VerifyReceiptStatus.Class.permanent),
        (#"{"status":21150,"is-retryable":false}"#, .permanent),
        (#"{"status":21150,"is-retryable":true}"#, .retryLater),
        (#"{"status":21100,"is-retryable":"true"}"#, .retryLater),
    ])
    func internalDataAccessErrors(json: String, expected: VerifyReceiptStatus.Class) throws {
        let body = try VerifyReceiptResponse(jsonBytes: Data(json.utf8))
        #expect(body.status.isInternalDataAccessError)
        #expect(body.status.classify(isRetryable: body.isRetryable) == expected)
    }

    @Test("malformed JSON is a typed malformed-body error that quotes nothing from the body")
    func malformed() throws {
        let error = #expect(throws: AppStoreError.self) {
            try Fixtures.verifyReceipt("verifyreceipt-malformed-json-swifty.json")
        }
        #expect(error?.code == .malformedBody)
        #expect(error?.isRetryable == false)
        #expect(error?.description.contains("abc123") == false)
        #expect(error?.debugDescription.contains("Sandbox") == false)
    }

    @Test("a JSON body without a status is malformed")
    func missingStatus() {
        #expect(throws: AppStoreError.self) { try VerifyReceiptResponse(jsonBytes: Data(#"{"receipt":{}}"#.utf8)) }
    }

    @Test("unknown top-level fields are kept, not errors")
    func unknownFields() throws {
        let body = try VerifyReceiptResponse(jsonBytes: Data(#"{"status":"0","new_field":{"a":[1,true]},"is-retryable":"false"}"#.utf8))
        #expect(body.status == .valid)
        #expect(body.unknownFields["new_field"] == .object(["a": .array([.integer(1), .bool(true)])]))
        #expect(body.isRetryable == false)
    }
}
