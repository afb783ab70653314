/// The closed sets of values verifyReceipt bodies use. Models keep the raw text and expose these
/// as typed optionals, so a value Apple adds later never fails decoding or a replay.

/// Why Apple refunded a transaction (`cancellation_reason`).
/// https://developer.apple.com/documentation/appstorereceipts/cancellation_reason
public enum CancellationReason: Int, Hashable, Sendable, Codable {
    /// Another reason, for example a purchase made by mistake.
    case other = 0
    /// The customer reported an issue with the app.
    case appIssue = 1
}

/// Why a subscription expired (`expiration_intent`; JWS `expirationIntent`).
/// https://developer.apple.com/documentation/appstorereceipts/expiration_intent
public enum ExpirationIntent: Int, Hashable, Sendable, Codable {
    case customerCancelled = 1
    case billingError = 2
    case priceIncreaseNotConsented = 3
    case productUnavailable = 4
    case other = 5
}

/// Whether the buyer purchased the product or has it through Family Sharing
/// (`in_app_ownership_type`; JWS `inAppOwnershipType`).
/// https://developer.apple.com/documentation/appstorereceipts/in_app_ownership_type
public enum InAppOwnershipType: String, Hashable, Sendable, Codable {
    case purchased = "PURCHASED"
    case familyShared = "FAMILY_SHARED"
}

/// Whether the body follows the iOS 7 receipt format (`receipt.in_app`, `bundle_id`) or the
/// deprecated iOS 6 transaction receipt format (`receipt` is itself one transaction, `bid`).
public enum ReceiptStyle: String, Hashable, Sendable, Codable {
    case iOS7
    case iOS6
}
