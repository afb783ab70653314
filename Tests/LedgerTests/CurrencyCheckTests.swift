import Foundation
import Primitives
import Testing
@testable import AppStore
@testable import Ledger

/// Currencies are ISO 4217 codes on the way in (issue 23): a value Apple's signed data, a
/// catalog, an import or a report names otherwise never becomes money, a report cell or a CSV
/// column.
@Suite("Currencies are checked against ISO 4217 on the way in")
struct CurrencyCheckTests {
    @Test("the codes Apple pays in are codes; formulas, lower case and made-up codes are not",
          arguments: [("USD", true), ("EUR", true), ("JPY", true), ("BRL", true), ("usd", false), ("US", false),
                      ("USDX", false), ("XTS", false), ("XXX", false), ("=HY", false), ("=HYPERLINK(\"x\")", false), ("", false)])
    func codes(_ text: String, _ expected: Bool) {
        #expect(ISO4217.isCode(text) == expected)
    }

    @Test("a signed transaction whose currency is not ISO 4217 gives evidence with no price and no currency")
    func signedTransaction() throws {
        func evidence(currency: String) throws -> EvidenceEntry {
            let json = #"{"transactionId": "1", "originalTransactionId": "1", "productId": "p", "price": 990, "currency": "\#(currency)"}"#
            return EvidenceEntry(signed: try JSONDecoder().decode(SignedTransaction.self, from: Data(json.utf8)))
        }
        let good = try evidence(currency: "EUR")
        #expect(good.priceMilliunits == 990 && good.currency == "EUR")
        let formula = try evidence(currency: "=SUM")
        #expect(formula.priceMilliunits == nil && formula.currency == nil)
    }

    @Test("a recorded price in a currency that is not ISO 4217 is no money on replay")
    func replayedPrice() {
        #expect(RevenueProjection.applePrice(990, "EUR") != nil)
        #expect(RevenueProjection.applePrice(990, "=HYPERLINK(\"x\")") == nil)
        #expect(RevenueProjection.applePrice(990, "ABC") == nil)
    }

    @Test("a report's currency column takes ISO 4217 codes only, naming the line and column")
    func reportColumn() throws {
        #expect(try ReportValue.currency("usd", line: 2, column: "Currency of Proceeds") == "USD")
        #expect(throws: AppStoreReportError.self) { try ReportValue.currency("ABC", line: 3, column: "Currency of Proceeds") }
        #expect(throws: AppStoreReportError.self) { try ReportValue.currency("=1+", line: 3, column: "Currency of Proceeds") }
    }
}
