import Primitives

/// One purchase in a verifyReceipt body: an item of `receipt.in_app`, of `latest_receipt_info`,
/// `latest_expired_receipt_info`, or an iOS 6 style `receipt` (which is itself one transaction).
///
/// Dates are milliseconds since 1970, UTC, taken from the `_ms` field, else from the iOS 6 style
/// millisecond `expires_date`, else from the `"... Etc/GMT"` text. Every scalar is accepted as a
/// string or as a JSON number/boolean. Fields not modelled here are kept in `unknownFields`,
/// except the `_pst` and formatted date texts, which only repeat a modelled date.
/// https://developer.apple.com/documentation/appstorereceipts/responsebody/receipt/in_app
/// https://developer.apple.com/documentation/appstorereceipts/responsebody/latest_receipt_info
public struct ReceiptTransaction: Hashable, Sendable, Decodable {
    /// `transaction_id`: unique per purchase, restore and renewal; the ledger delivers each once.
    public var transactionID: String
    /// `original_transaction_id`: the first purchase of this product by this Apple ID; ownership
    /// is keyed by it.
    public var originalTransactionID: String?
    /// `web_order_line_item_id`: identifies a subscription purchase event across devices.
    public var webOrderLineItemID: String?
    /// `product_id` as configured in App Store Connect.
    public var productID: String
    /// `quantity` of consumables bought in this transaction (1 when Apple omits it).
    public var quantity: Int64
    /// `purchase_date_ms`: milliseconds since 1970, UTC.
    public var purchaseDate: Int64?
    /// `original_purchase_date_ms`: milliseconds since 1970, UTC.
    public var originalPurchaseDate: Int64?
    /// `expires_date_ms` (auto-renewable subscriptions): milliseconds since 1970, UTC.
    public var expiresDate: Int64?
    /// `cancellation_date_ms`: when Apple refunded or revoked it; milliseconds since 1970, UTC.
    public var cancellationDate: Int64?
    /// `cancellation_reason` as Apple sent it (`"0"`, `"1"`).
    public var cancellationReasonRaw: String?
    /// `is_trial_period`: this period is a free trial.
    public var isTrialPeriod: Bool?
    /// `is_in_intro_offer_period`: this period uses an introductory price.
    public var isInIntroOfferPeriod: Bool?
    /// `is_upgraded`: the subscription was upgraded away from; the customer has the new one.
    public var isUpgraded: Bool?
    /// `in_app_ownership_type` as Apple sent it (`PURCHASED`, `FAMILY_SHARED`).
    public var inAppOwnershipTypeRaw: String?
    /// `subscription_group_identifier`.
    public var subscriptionGroupIdentifier: String?
    /// `app_account_token`: the UUID the app passed to StoreKit, often empty.
    public var appAccountToken: String?
    /// `promotional_offer_id`, `offer_code_ref_name`: which offer priced this period.
    public var promotionalOfferID: String?
    public var offerCodeRefName: String?
    /// iOS 6 style only: `bid` (bundle id), `bvrs` (bundle version), `item_id` (Apple's app id).
    public var bundleID: String?
    public var bundleVersion: String?
    public var itemID: String?
    /// Every other field, as sent.
    public var unknownFields: [String: JSONValue]

    /// `cancellation_reason`, typed; nil when absent or a value this module does not know.
    public var cancellationReason: CancellationReason? {
        cancellationReasonRaw.flatMap(Int.init).flatMap(CancellationReason.init(rawValue:))
    }

    /// `in_app_ownership_type`, typed; nil when absent or unknown.
    public var inAppOwnershipType: InAppOwnershipType? {
        inAppOwnershipTypeRaw.flatMap(InAppOwnershipType.init(rawValue:))
    }

    /// True when Apple refunded or revoked this transaction.
    public var isCancelled: Bool { cancellationDate != nil }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        var transactionID: String?, productID: String?
        var dateTexts: [String: String] = [:]
        quantity = 1
        unknownFields = [:]
        for key in c.allKeys {
            switch key.stringValue {
            case "transaction_id": transactionID = try c.lenientString(key)
            case "original_transaction_id": originalTransactionID = try c.lenientString(key)
            case "web_order_line_item_id": webOrderLineItemID = try c.lenientString(key)
            case "product_id": productID = try c.lenientString(key)
            case "quantity": quantity = try c.lenientInt64(key) ?? 1
            case "purchase_date_ms": purchaseDate = try c.lenientInt64(key)
            case "original_purchase_date_ms": originalPurchaseDate = try c.lenientInt64(key)
            case "expires_date_ms": expiresDate = try c.lenientInt64(key)
            case "cancellation_date_ms": cancellationDate = try c.lenientInt64(key)
            case "purchase_date", "original_purchase_date", "expires_date", "cancellation_date",
                 "expires_date_formatted":
                dateTexts[key.stringValue] = try c.lenientString(key)
            case "purchase_date_pst", "original_purchase_date_pst", "expires_date_pst",
                 "cancellation_date_pst", "expires_date_formatted_pst":
                continue
            case "cancellation_reason": cancellationReasonRaw = try c.lenientString(key)
            case "is_trial_period": isTrialPeriod = try c.lenientBool(key)
            case "is_in_intro_offer_period": isInIntroOfferPeriod = try c.lenientBool(key)
            case "is_upgraded": isUpgraded = try c.lenientBool(key)
            case "in_app_ownership_type": inAppOwnershipTypeRaw = try c.lenientString(key)
            case "subscription_group_identifier": subscriptionGroupIdentifier = try c.lenientString(key)
            case "app_account_token": appAccountToken = try c.lenientString(key)
            case "promotional_offer_id": promotionalOfferID = try c.lenientString(key)
            case "offer_code_ref_name": offerCodeRefName = try c.lenientString(key)
            case "bid": bundleID = try c.lenientString(key)
            case "bvrs": bundleVersion = try c.lenientString(key)
            case "item_id": itemID = try c.lenientString(key)
            default: unknownFields[key.stringValue] = try c.json(key)
            }
        }
        guard let transactionID else { throw c.missing("transaction_id") }
        guard let productID else { throw c.missing("product_id") }
        self.transactionID = transactionID
        self.productID = productID
        // The `_ms` twin wins; the text is read only when Apple sent no `_ms` (2014-era bodies,
        // and iOS 6 style where `expires_date` itself is milliseconds).
        if !dateTexts.isEmpty {
            purchaseDate = purchaseDate ?? AppleDate.milliseconds(fromText: dateTexts["purchase_date"])
            originalPurchaseDate = originalPurchaseDate ?? AppleDate.milliseconds(fromText: dateTexts["original_purchase_date"])
            cancellationDate = cancellationDate ?? AppleDate.milliseconds(fromText: dateTexts["cancellation_date"])
            expiresDate = expiresDate ?? AppleDate.milliseconds(fromText: dateTexts["expires_date"])
                ?? AppleDate.milliseconds(fromText: dateTexts["expires_date_formatted"])
        }
    }
}
