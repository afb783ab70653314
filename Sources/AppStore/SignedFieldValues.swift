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
    /// Carries `appData` instead of `data` (2025).
    case rescindConsent = "RESCIND_CONSENT"
    case metadataUpdate = "METADATA_UPDATE"
    /// Apple's changelog once spelt it `MIGRATE`; the libraries and payloads spell it so.
    case migration = "MIGRATION"
    case priceChange = "PRICE_CHANGE"
}

/// `subtype` of App Store Server Notifications V2; payloads keep the raw value, so a subtype
/// Apple adds later is recorded as sent.
/// https://developer.apple.com/documentation/appstoreservernotifications/subtype
public enum NotificationSubtypeV2: String, Hashable, Sendable, Codable, CaseIterable {
    case initialBuy = "INITIAL_BUY"
    case resubscribe = "RESUBSCRIBE"
    case downgrade = "DOWNGRADE"
    case upgrade = "UPGRADE"
    case autoRenewEnabled = "AUTO_RENEW_ENABLED"
    case autoRenewDisabled = "AUTO_RENEW_DISABLED"
    case voluntary = "VOLUNTARY"
    case billingRetry = "BILLING_RETRY"
    case priceIncrease = "PRICE_INCREASE"
    case gracePeriod = "GRACE_PERIOD"
    case pending = "PENDING"
    case accepted = "ACCEPTED"
    case billingRecovery = "BILLING_RECOVERY"
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    case summary = "SUMMARY"
    case failure = "FAILURE"
    case unreported = "UNREPORTED"
}

/// `billingPlanType` of a transaction and `renewalBillingPlanType` of renewal info (API 1.21):
/// paid up front, or monthly against a 12-month commitment.
public enum BillingPlanType: String, Hashable, Sendable, Codable {
    case billedUpfront = "BILLED_UPFRONT"
    case monthly = "MONTHLY"
}
