import Foundation
import Testing

@testable import AppStore

@Suite("Lenient scalars and Apple's date texts")
struct LenientDecodingTests {
    @Test("Etc/GMT date texts become milliseconds since 1970 UTC", arguments: [
        ("2016-06-17 01:37:28 Etc/GMT", Int64(1_466_127_448_000)),
        ("1970-01-01 00:00:00 Etc/GMT", 0),
        ("2000-02-29 12:00:00 GMT", 951_825_600_000),
        ("2014-03-12 10:18:05 Etc\\/GMT", nil),
        ("2016-06-16 18:37:28 America/Los_Angeles", nil),
        ("2016-13-16 18:37:28 Etc/GMT", nil),
    ])
    func gmtDates(text: String, expected: Int64?) {
        #expect(AppleDate.milliseconds(fromGMT: text) == expected)
    }

    @Test("strings, numbers and booleans all read as the modelled type")
    func scalars() throws {
        let json = #"{"transaction_id":1,"product_id":"p","quantity":"2","is_trial_period":"1","is_upgraded":0,"purchase_date_ms":"5","expires_date_ms":6,"cancellation_reason":1}"#
        let t = try JSONDecoder().decode(ReceiptTransaction.self, from: Data(json.utf8))
        #expect(t.transactionID == "1")
        #expect(t.quantity == 2)
        #expect(t.isTrialPeriod == true)
        #expect(t.isUpgraded == false)
        #expect(t.purchaseDate == 5 && t.expiresDate == 6)
        #expect(t.cancellationReason == .appIssue)
    }

    @Test("an unknown enum value is kept raw and typed as nil")
    func unknownEnum() throws {
        let json = #"{"transaction_id":"1","product_id":"p","in_app_ownership_type":"GIFTED","cancellation_reason":"7"}"#
        let t = try JSONDecoder().decode(ReceiptTransaction.self, from: Data(json.utf8))
        #expect(t.inAppOwnershipTypeRaw == "GIFTED" && t.inAppOwnershipType == nil)
        #expect(t.cancellationReasonRaw == "7" && t.cancellationReason == nil)
    }

    @Test("a transaction without transaction_id is malformed, with the key named and no value quoted")
    func missingTransactionID() {
        let json = Data(#"{"status":0,"receipt":{"bundle_id":"b","in_app":[{"product_id":"secret-product"}]}}"#.utf8)
        let error = #expect(throws: AppStoreError.self) { try VerifyReceiptResponse(jsonBytes: json) }
        #expect(error?.debugDescription.contains("transaction_id") == true)
        #expect(error?.debugDescription.contains("secret-product") == false)
    }
}
