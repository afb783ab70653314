/// The closed sets of values in App Store signed payloads (JWS). Models keep the raw value and
/// expose these as typed optionals, as app-store-server-library-swift does, so a value Apple adds
/// later never fails decoding or a replay.

/// `type` of a transaction.
/// https://developer.apple.com/documentation/appstoreserverapi/type
public enum ProductType: String, Hashable, Sendable, Codable {
    case autoRenewable = "Auto-Renewable Subscription"
    case nonConsumable = "Non-Consumable"
    case consumable = "Consumable"
    case nonRenewing = "Non-Renewing Subscription"
}

/// `offerType`: which kind of offer priced the transaction or renewal.
/// https://developer.apple.com/documentation/appstoreserverapi/offertype
public enum OfferType: Int, Hashable, Sendable, Codable {
    case introductory = 1
    case promotional = 2
    case offerCode = 3
    case winBack = 4
}

/// `revocationReason`: the same values as verifyReceipt's `cancellation_reason`.
/// https://developer.apple.com/documentation/appstoreserverapi/revocationreason
public typealias RevocationReason = CancellationReason

/// `revocationType`: a full or partial refund, or loss of Family Sharing.
public enum RevocationType: String, Hashable, Sendable, Codable {
    case refundFull = "REFUND_FULL"
    case refundProrated = "REFUND_PRORATED"
    case familyRevoke = "FAMILY_REVOKE"
}

/// `transactionReason`: bought by the customer, or an automatic renewal.
public enum TransactionReason: String, Hashable, Sendable, Codable {
    case purchase = "PURCHASE"
    case renewal = "RENEWAL"
}

/// `offerDiscountType`: how an offer is paid.
public enum OfferDiscountType: String, Hashable, Sendable, Codable {
    case freeTrial = "FREE_TRIAL"
    case payAsYouGo = "PAY_AS_YOU_GO"
    case payUpFront = "PAY_UP_FRONT"
    case oneTime = "ONE_TIME"
}

/// `status` of an auto-renewable subscription (notification `data.status`, API status responses).
/// https://developer.apple.com/documentation/appstoreserverapi/status
public enum SubscriptionStatus: Int, Hashable, Sendable, Codable {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case billingGracePeriod = 4
    case revoked = 5
}

/// `notificationType` of App Store Server Notifications V2.
/// https://developer.apple.com/documentation/appstoreservernotifications/notificationtype
public enum NotificationTypeV2: String, Hashable, Sendable, Codable, CaseIterable {
    case consumptionRequest = "CONSUMPTION_REQUEST"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case didRenew = "DID_RENEW"
    case expired = "EXPIRED"
    case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
    case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    case offerRedeemed = "OFFER_REDEEMED"
    case oneTimeCharge = "ONE_TIME_CHARGE"
    case priceIncrease = "PRICE_INCREASE"
    case refund = "REFUND"
    case refundDeclined = "REFUND_DECLINED"
    case refundReversed = "REFUND_REVERSED"
    case renewalExtended = "RENEWAL_EXTENDED"
    case renewalExtension = "RENEWAL_EXTENSION"
    case revoke = "REVOKE"
    case subscribed = "SUBSCRIBED"
    case test = "TEST"
}
