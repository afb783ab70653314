import Foundation
import SwiftASN1

/// The purchases listed in an app receipt (iOS 7 style, PKCS#7), read locally without checking
/// its signature: the ledger learns which transactions a client claims before asking Apple, and
/// only Apple's answer decides delivery.
///
/// The receipt is a BER `ContentInfo` whose signed content is a DER `SET` of attributes
/// `(type, version, value)`; type 2 is the bundle id and each type 17 holds one in-app purchase
/// with 1701 quantity, 1702 product id, 1703 transaction id and 1705 original transaction id.
/// https://developer.apple.com/library/archive/releasenotes/General/ValidateAppStoreReceipt/Chapters/ReceiptFields.html
public struct AppReceipt: Hashable, Sendable {
    /// One in-app purchase of the receipt.
    public struct Purchase: Hashable, Sendable {
        public var transactionID: String?
        public var originalTransactionID: String?
        public var productID: String?
        public var quantity: Int?
    }

    public var bundleID: String?
    public var purchases: [Purchase]

    /// Reads a base64 app receipt; `.invalidRequest` when it is not one.
    public init(base64: String) throws(AppStoreError) {
        guard let bytes = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw AppStoreError(.invalidRequest, "the app receipt is not base64")
        }
        do {
            let contentInfo = try BER.parse(Array(bytes))
            // ContentInfo → [0] → SignedData → encapContentInfo → [0] → OCTET STRING(s).
            guard let signedData = Self.children(contentInfo).last.flatMap({ Self.children($0).first }),
                  Self.children(signedData).count > 2
            else { throw AppStoreError(.invalidRequest, "the app receipt is not PKCS#7 signed data") }
            let encapsulated = Self.children(signedData)[2]
            guard let wrapped = Self.children(encapsulated).last else {
                throw AppStoreError(.invalidRequest, "the app receipt has no content")
            }
            var payload: [UInt8] = []
            Self.collectOctets(wrapped, into: &payload)
            var bundleID: String?
            var purchases: [Purchase] = []
            for (type, value) in try Self.attributes(payload) {
                if type == 2 { bundleID = try Self.string(value) }
                guard type == 17 else { continue }
                var purchase = Purchase()
                for (field, content) in try Self.attributes(value) {
                    switch field {
                    case 1701: purchase.quantity = try Int(derEncoded: content)
                    case 1702: purchase.productID = try Self.string(content)
                    case 1703: purchase.transactionID = try Self.string(content)
                    case 1705: purchase.originalTransactionID = try Self.string(content)
                    default: continue
                    }
                }
                purchases.append(purchase)
            }
            self.bundleID = bundleID
            self.purchases = purchases
        } catch let error as AppStoreError {
            throw error
        } catch {
            throw AppStoreError(.invalidRequest, "the app receipt is not valid ASN.1", underlying: String(describing: type(of: error)))
        }
    }

    private static func children(_ node: ASN1Node) -> [ASN1Node] {
        if case .constructed(let nodes) = node.content { return Array(nodes) }
        return []
    }

    /// BER may split an OCTET STRING into constructed chunks; concatenate the primitive parts.
    private static func collectOctets(_ node: ASN1Node, into bytes: inout [UInt8]) {
        switch node.content {
        case .primitive(let slice): bytes += slice
        case .constructed(let nodes): for child in nodes { collectOctets(child, into: &bytes) }
        }
    }

    /// The `SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }` of a receipt.
    private static func attributes(_ der: [UInt8]) throws -> [(Int, [UInt8])] {
        try children(DER.parse(der)).compactMap { attribute in
            let fields = children(attribute)
            guard fields.count == 3, case .primitive(let value) = fields[2].content else { return nil }
            return (try Int(derEncoded: fields[0]), Array(value))
        }
    }

    /// A UTF8String or IA5String value, as Apple encodes text fields.
    private static func string(_ der: [UInt8]) throws -> String {
        let node = try DER.parse(der)
        guard case .primitive(let bytes) = node.content else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }
}
