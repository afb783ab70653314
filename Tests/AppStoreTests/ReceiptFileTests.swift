import Foundation
import Testing

@testable import AppStore

@Suite("Receipts as clients send them")
struct ReceiptFileTests {
    @Test("a 2012 sandbox iOS 6 transaction receipt reads its purchase-info")
    func iOS6Receipt() throws {
        let receipt = try LegacyTransactionReceipt(base64: try Fixtures.text("receipt-ios6-transaction-receipt-sandbox-voltrue2.b64"))
        #expect(receipt.transactionID == "1000000046178817")
        #expect(receipt.originalTransactionID == "1000000046178817")
        #expect(receipt.productID == "com.mindmobapp.download")
        #expect(receipt.bundleID == "com.mindmobapp.MindMob")
        #expect(receipt.purchaseInfo["bvrs"] == "20120427")
        #expect(receipt.purchaseDate == 1_335_798_355_868)
        #expect(receipt.environment == "Sandbox")
        #expect(receipt.fields["signature"]?.isEmpty == false)
    }

    @Test("app-store-server-library's minimal legacy receipt yields transaction id 33993399")
    func legacyReceipt() throws {
        let receipt = try LegacyTransactionReceipt(base64: try Fixtures.text("receipt-legacy-transaction-receipt-asslib.b64"))
        #expect(receipt.transactionID == "33993399")
        #expect(receipt.environment == nil)
    }

    @Test("an Xcode app receipt (PKCS#7, BER) lists its one purchase with transaction id 0")
    func appReceipt() throws {
        let base64 = try Fixtures.text("receipt-xcode-app-receipt-with-transaction-asslib.b64")
        let receipt = try AppReceipt(base64: base64)
        #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.purchases.count == 1)
        #expect(receipt.purchases.first?.transactionID == "0")
        #expect(receipt.purchases.first?.originalTransactionID == nil)  // Xcode omits 1705
        #expect(receipt.purchases.first?.productID == "pass.premium")
        #expect(receipt.purchases.first?.quantity == 1)
        expectErrorNow(.invalidRequest) { _ = try LegacyTransactionReceipt(base64: base64) }
    }

    @Test("a legacy transaction receipt is not an app receipt")
    func legacyIsNotAppReceipt() throws {
        let base64 = try Fixtures.text("receipt-legacy-transaction-receipt-asslib.b64")
        expectErrorNow(.invalidRequest) { _ = try AppReceipt(base64: base64) }
    }
}
