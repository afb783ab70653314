import Primitives

/// The `receipt` object of a verifyReceipt body, in either of Apple's two formats.
///
/// iOS 7 style: app-level fields (`bundle_id`, `application_version`, ...) and the purchases in
/// `in_app`. iOS 6 style: the object is itself one transaction with `bid` and `bvrs`; it is then
/// decoded as that transaction and is the single element of `inApp`, so a caller looking for a
/// `transaction_id` searches `inApp` in both styles. Dates are milliseconds since 1970, UTC.
/// https://developer.apple.com/documentation/appstorereceipts/responsebody/receipt
public struct Receipt: Hashable, Sendable, Decodable {
    /// Which format Apple used.
    public var style: ReceiptStyle
    /// `bundle_id` (iOS 7) or `bid` (iOS 6): the app the receipt belongs to.
    public var bundleID: String?
    /// `application_version` (iOS 7) or `bvrs` (iOS 6).
    public var applicationVersion: String?
    /// `original_application_version`: the version the customer first bought.
    public var originalApplicationVersion: String?
    /// `receipt_type`: `Production`, `ProductionSandbox`, ...
    public var receiptType: String?
    /// `adam_id` / `app_item_id`: Apple's id for the app (0 in sandbox).
    public var appItemID: String?
    /// `receipt_creation_date_ms`, `request_date_ms`, `original_purchase_date_ms`,
    /// `expiration_date_ms` (volume purchase): milliseconds since 1970, UTC.
    public var creationDate: Int64?
    public var requestDate: Int64?
    public var originalPurchaseDate: Int64?
    public var expirationDate: Int64?
    /// The purchases: `in_app` (iOS 7), or the receipt's own transaction (iOS 6).
    /// Apple does not sort it; consumables disappear once finished.
    public var inApp: [ReceiptTransaction]
    /// Every other field of an iOS 7 receipt, as sent (iOS 6 ones are in the transaction).
    public var unknownFields: [String: JSONValue]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        // iOS 6 receipts carry `bid` and a transaction id at the top; iOS 7 ones `bundle_id`.
        if !c.contains(AnyKey("bundle_id")), c.contains(AnyKey("bid")) || c.contains(AnyKey("transaction_id")) {
            let transaction = try ReceiptTransaction(from: decoder)
            style = .iOS6
            bundleID = transaction.bundleID
            applicationVersion = transaction.bundleVersion
            appItemID = transaction.unknownFields["app_item_id"].flatMap(\.stringValue)
            originalPurchaseDate = transaction.originalPurchaseDate
            inApp = [transaction]
            unknownFields = [:]
            return
        }
        style = .iOS7
        inApp = []
        unknownFields = [:]
        var texts: [String: String] = [:]
        for key in c.allKeys {
            switch key.stringValue {
            case "bundle_id": bundleID = try c.lenientString(key)
            case "application_version": applicationVersion = try c.lenientString(key)
            case "original_application_version": originalApplicationVersion = try c.lenientString(key)
            case "receipt_type": receiptType = try c.lenientString(key)
            case "adam_id", "app_item_id":
                // Both name Apple's app id; keep the non-zero one.
                let value = try c.lenientString(key)
                if appItemID == nil || appItemID == "0" { appItemID = value }
            case "receipt_creation_date_ms": creationDate = try c.lenientInt64(key)
            case "request_date_ms": requestDate = try c.lenientInt64(key)
            case "original_purchase_date_ms": originalPurchaseDate = try c.lenientInt64(key)
            case "expiration_date_ms": expirationDate = try c.lenientInt64(key)
            case "receipt_creation_date", "request_date", "original_purchase_date", "expiration_date":
                texts[key.stringValue] = try c.lenientString(key)
            case "receipt_creation_date_pst", "request_date_pst", "original_purchase_date_pst",
                 "expiration_date_pst":
                continue
            case "in_app": inApp = try c.decodeIfPresent([ReceiptTransaction].self, forKey: key) ?? []
            default: unknownFields[key.stringValue] = try c.json(key)
            }
        }
        func date(_ name: String) -> Int64? { AppleDate.milliseconds(fromText: texts[name]) }
        creationDate = creationDate ?? date("receipt_creation_date")
        requestDate = requestDate ?? date("request_date")
        originalPurchaseDate = originalPurchaseDate ?? date("original_purchase_date")
        expirationDate = expirationDate ?? date("expiration_date")
    }
}
