import Primitives

/// One item of `pending_renewal_info`: what will happen at the next renewal of one subscription.
///
/// Dates are milliseconds since 1970, UTC. Scalars are accepted as strings or JSON numbers and
/// booleans; fields not modelled are kept in `unknownFields`.
/// https://developer.apple.com/documentation/appstorereceipts/responsebody/pending_renewal_info
public struct PendingRenewalInfo: Hashable, Sendable, Decodable {
    /// `original_transaction_id` of the subscription this describes.
    public var originalTransactionID: String?
    /// `product_id` currently subscribed.
    public var productID: String?
    /// `auto_renew_product_id`: the product it renews into (differs after a crossgrade/downgrade).
    public var autoRenewProductID: String?
    /// `auto_renew_status`: true when the subscription will renew (`"1"`), false when the
    /// customer turned renewal off (`"0"`).
    public var autoRenewStatus: Bool?
    /// `expiration_intent` as Apple sent it (`"1"` ... `"5"`).
    public var expirationIntentRaw: String?
    /// `is_in_billing_retry_period`: Apple is still trying to charge an expired subscription.
    public var isInBillingRetryPeriod: Bool?
    /// `grace_period_expires_date_ms`: end of the billing grace period; milliseconds since 1970, UTC.
    public var gracePeriodExpiresDate: Int64?
    /// `price_consent_status`, `offer_code_ref_name`, `promotional_offer_id` as sent.
    public var priceConsentStatus: String?
    public var offerCodeRefName: String?
    public var promotionalOfferID: String?
    /// Every other field, as sent.
    public var unknownFields: [String: JSONValue]

    /// `expiration_intent`, typed; nil when absent or unknown.
    public var expirationIntent: ExpirationIntent? {
        expirationIntentRaw.flatMap(Int.init).flatMap(ExpirationIntent.init(rawValue:))
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        var graceText: String?
        unknownFields = [:]
        for key in c.allKeys {
            switch key.stringValue {
            case "original_transaction_id": originalTransactionID = try c.lenientString(key)
            case "product_id": productID = try c.lenientString(key)
            case "auto_renew_product_id": autoRenewProductID = try c.lenientString(key)
            case "auto_renew_status": autoRenewStatus = try c.lenientBool(key)
            case "expiration_intent": expirationIntentRaw = try c.lenientString(key)
            case "is_in_billing_retry_period": isInBillingRetryPeriod = try c.lenientBool(key)
            case "grace_period_expires_date_ms": gracePeriodExpiresDate = try c.lenientInt64(key)
            case "grace_period_expires_date": graceText = try c.lenientString(key)
            case "grace_period_expires_date_pst": continue
            case "price_consent_status": priceConsentStatus = try c.lenientString(key)
            case "offer_code_ref_name": offerCodeRefName = try c.lenientString(key)
            case "promotional_offer_id": promotionalOfferID = try c.lenientString(key)
            default: unknownFields[key.stringValue] = try c.json(key)
            }
        }
        gracePeriodExpiresDate = gracePeriodExpiresDate ?? AppleDate.milliseconds(fromText: graceText)
    }
}
