/// The decoded payload of signed renewal information (`JWSRenewalInfo`): what happens at the
/// next renewal of one subscription.
///
/// Dates are milliseconds since 1970, UTC (a fraction of a millisecond, as Xcode's StoreKit
/// testing signs, is dropped); `renewalPrice` is in milliunits of `currency`. Enumerations keep
/// Apple's raw value.
/// https://developer.apple.com/documentation/appstoreserverapi/jwsrenewalinfodecodedpayload
public struct SignedRenewalInfo: Hashable, Sendable, Codable {
    public var originalTransactionId: String?
    public var productId: String?
    public var autoRenewProductId: String?
    /// 1 when the subscription will renew, 0 when the customer turned renewal off.
    public var autoRenewStatus: Int?
    public var rawExpirationIntent: Int?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: Int?
    /// End of the billing grace period; milliseconds since 1970, UTC.
    public var gracePeriodExpiresDate: Int64?
    public var rawOfferType: Int?
    public var offerIdentifier: String?
    /// When Apple signed this payload; milliseconds since 1970, UTC.
    public var signedDate: Int64?
    public var rawEnvironment: String?
    public var recentSubscriptionStartDate: Int64?
    /// Next renewal; milliseconds since 1970, UTC.
    public var renewalDate: Int64?
    /// The price of the next renewal in milliunits of `currency`.
    public var renewalPrice: Int64?
    public var currency: String?
    public var rawOfferDiscountType: String?
    public var eligibleWinBackOfferIds: [String]?
    public var appTransactionId: String?
    public var offerPeriod: String?
    public var appAccountToken: String?
    /// `renewalBillingPlanType` as sent; see `renewalBillingPlanType`.
    public var rawRenewalBillingPlanType: String?
    /// What the subscription's commitment renews into (API 1.21); nil outside a commitment.
    /// https://developer.apple.com/documentation/appstoreserverapi/renewalcommitmentinfo
    public var commitmentInfo: RenewalCommitmentInfo?

    public var willAutoRenew: Bool? { autoRenewStatus.map { $0 == 1 } }
    public var expirationIntent: ExpirationIntent? { rawExpirationIntent.flatMap(ExpirationIntent.init(rawValue:)) }
    public var offerType: OfferType? { rawOfferType.flatMap(OfferType.init(rawValue:)) }
    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(appleValue:)) }
    public var offerDiscountType: OfferDiscountType? { rawOfferDiscountType.flatMap(OfferDiscountType.init(rawValue:)) }
    public var renewalBillingPlanType: BillingPlanType? { rawRenewalBillingPlanType.flatMap(BillingPlanType.init(rawValue:)) }

    enum CodingKeys: String, CodingKey {
        case originalTransactionId, productId, autoRenewProductId, autoRenewStatus
        case rawExpirationIntent = "expirationIntent", isInBillingRetryPeriod, priceIncreaseStatus
        case gracePeriodExpiresDate, rawOfferType = "offerType", offerIdentifier, signedDate
        case rawEnvironment = "environment", recentSubscriptionStartDate, renewalDate, renewalPrice
        case currency, rawOfferDiscountType = "offerDiscountType", eligibleWinBackOfferIds
        case appTransactionId, offerPeriod, appAccountToken, rawRenewalBillingPlanType = "renewalBillingPlanType"
        case commitmentInfo
    }
}

// By hand only so that dates may carry a fraction of a millisecond; in an extension, so the
// memberwise initializer stays.
extension SignedRenewalInfo {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try c.decodeIfPresent(String.self, forKey: .originalTransactionId)
        productId = try c.decodeIfPresent(String.self, forKey: .productId)
        autoRenewProductId = try c.decodeIfPresent(String.self, forKey: .autoRenewProductId)
        autoRenewStatus = try c.decodeIfPresent(Int.self, forKey: .autoRenewStatus)
        rawExpirationIntent = try c.decodeIfPresent(Int.self, forKey: .rawExpirationIntent)
        isInBillingRetryPeriod = try c.decodeIfPresent(Bool.self, forKey: .isInBillingRetryPeriod)
        priceIncreaseStatus = try c.decodeIfPresent(Int.self, forKey: .priceIncreaseStatus)
        gracePeriodExpiresDate = try c.decodeMillisecondsIfPresent(forKey: .gracePeriodExpiresDate)
        rawOfferType = try c.decodeIfPresent(Int.self, forKey: .rawOfferType)
        offerIdentifier = try c.decodeIfPresent(String.self, forKey: .offerIdentifier)
        signedDate = try c.decodeMillisecondsIfPresent(forKey: .signedDate)
        rawEnvironment = try c.decodeIfPresent(String.self, forKey: .rawEnvironment)
        recentSubscriptionStartDate = try c.decodeMillisecondsIfPresent(forKey: .recentSubscriptionStartDate)
        renewalDate = try c.decodeMillisecondsIfPresent(forKey: .renewalDate)
        renewalPrice = try c.decodeIfPresent(Int64.self, forKey: .renewalPrice)
        currency = try c.decodeIfPresent(String.self, forKey: .currency)
        rawOfferDiscountType = try c.decodeIfPresent(String.self, forKey: .rawOfferDiscountType)
        eligibleWinBackOfferIds = try c.decodeIfPresent([String].self, forKey: .eligibleWinBackOfferIds)
        appTransactionId = try c.decodeIfPresent(String.self, forKey: .appTransactionId)
        offerPeriod = try c.decodeIfPresent(String.self, forKey: .offerPeriod)
        appAccountToken = try c.decodeIfPresent(String.self, forKey: .appAccountToken)
        rawRenewalBillingPlanType = try c.decodeIfPresent(String.self, forKey: .rawRenewalBillingPlanType)
        // Leniently, as a transaction's `commitmentInfo`: an unreadable block is left out.
        commitmentInfo = try? c.decodeIfPresent(RenewalCommitmentInfo.self, forKey: .commitmentInfo)
    }
}
