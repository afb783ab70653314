import Foundation

/// An iOS 6 style transaction receipt (`SKPaymentTransaction.transactionReceipt`) read locally:
/// base64 of an old-style property list whose `purchase-info` is itself base64 of a property
/// list of `"key" = "value";` pairs.
///
/// This reads, it does not verify: Apple's signature is checked only by verifyReceipt. The ledger
/// uses it to learn which `transaction-id` a client sent before asking Apple.
/// https://developer.apple.com/documentation/storekit/skpaymenttransaction/transactionreceipt
public struct LegacyTransactionReceipt: Hashable, Sendable {
    /// The top-level pairs (`signature`, `purchase-info`, `environment`, `pod`, ...).
    public var fields: [String: String]
    /// The decoded `purchase-info` pairs (`transaction-id`, `product-id`, `bid`, ...).
    public var purchaseInfo: [String: String]

    /// `transaction-id` of the purchase.
    public var transactionID: String? { purchaseInfo["transaction-id"] }
    /// `original-transaction-id`, `product-id`, `bid`, `quantity` as written.
    public var originalTransactionID: String? { purchaseInfo["original-transaction-id"] }
    public var productID: String? { purchaseInfo["product-id"] }
    public var bundleID: String? { purchaseInfo["bid"] }
    /// `purchase-date-ms`: milliseconds since 1970, UTC.
    public var purchaseDate: Int64? { purchaseInfo["purchase-date-ms"].flatMap { Int64($0) } }
    /// `environment` (`Sandbox`); Apple omits it for production receipts.
    public var environment: String? { fields["environment"] }

    /// Reads `base64` (whitespace ignored); `.invalidRequest` when it is not such a receipt.
    public init(base64: String) throws(AppStoreError) {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters),
              let text = String(data: data, encoding: .utf8)
        else {
            throw AppStoreError(.invalidRequest, "the transaction receipt is not base64 text")
        }
        fields = Self.pairs(in: text)
        guard let info = fields["purchase-info"],
              let infoData = Data(base64Encoded: info, options: .ignoreUnknownCharacters),
              let infoText = String(data: infoData, encoding: .utf8)
        else {
            throw AppStoreError(.invalidRequest, "the transaction receipt has no readable purchase-info")
        }
        purchaseInfo = Self.pairs(in: infoText)
    }

    /// The `"key" = "value";` pairs of an old-style (NeXTSTEP) property list dictionary, one
    /// level deep, which is all these receipts contain. Escapes are not used by Apple here.
    static func pairs(in text: String) -> [String: String] {
        var result: [String: String] = [:]
        var strings: [String] = []
        var current = ""
        var inString = false
        var escaped = false
        for character in text {
            if inString {
                if escaped { current.append(character); escaped = false }
                else if character == "\\" { escaped = true }
                else if character == "\"" { strings.append(current); current = ""; inString = false }
                else { current.append(character) }
            } else if character == "\"" {
                inString = true
            } else if character == ";" {
                if strings.count == 2 { result[strings[0]] = strings[1] }
                strings.removeAll()
            }
        }
        return result
    }
}
