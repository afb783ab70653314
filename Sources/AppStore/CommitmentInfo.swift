/// `commitmentInfo` of a signed transaction (`TransactionCommitmentInfo`, App Store Server API
/// 1.21): where one instalment of a subscription billed monthly against a 12-month commitment
/// (`billingPlanType` `MONTHLY`) stands in that commitment.
///
/// `commitmentPrice` is in milliunits of the transaction's `currency` (59880 = 59.88 USD): what
/// the whole commitment costs, not what this transaction charged (that is the transaction's
/// `price`, the instalment). `commitmentExpiresDate` is milliseconds since 1970, UTC.
/// Read leniently: integers may come as numbers or numeric strings, dates with a fraction of a
/// millisecond; every field is optional, and a block whose shape cannot be read at all is left
/// out of its transaction (`SignedTransaction`) rather than refusing it.
/// https://developer.apple.com/documentation/appstoreserverapi/transactioncommitmentinfo
public struct TransactionCommitmentInfo: Hashable, Sendable, Codable {
    /// Which billing period of the commitment this transaction pays: 1 … `totalBillingPeriods`.
    public var billingPeriodNumber: Int64?
    /// How many billing periods the commitment has (12 for a year billed monthly).
    public var totalBillingPeriods: Int64?
    /// The price of the whole commitment, in milliunits of the transaction's `currency`.
    public var commitmentPrice: Int64?
    /// When the commitment ends; milliseconds since 1970, UTC.
    public var commitmentExpiresDate: Int64?

    public init(
        billingPeriodNumber: Int64? = nil, totalBillingPeriods: Int64? = nil, commitmentPrice: Int64? = nil,
        commitmentExpiresDate: Int64? = nil
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.commitmentPrice = commitmentPrice
        self.commitmentExpiresDate = commitmentExpiresDate
    }

    enum CodingKeys: String, CodingKey {
        case billingPeriodNumber, totalBillingPeriods, commitmentPrice, commitmentExpiresDate
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        billingPeriodNumber = try c.decodeIntegerIfPresent(forKey: .billingPeriodNumber)
        totalBillingPeriods = try c.decodeIntegerIfPresent(forKey: .totalBillingPeriods)
        commitmentPrice = try c.decodeIntegerIfPresent(forKey: .commitmentPrice)
        commitmentExpiresDate = try c.decodeMillisecondsOrTextIfPresent(forKey: .commitmentExpiresDate)
    }
}

/// `commitmentInfo` of signed renewal information (`RenewalCommitmentInfo`, App Store Server API
/// 1.21): what the subscription's commitment renews into when it ends.
///
/// `commitmentRenewalPrice` is in milliunits of the renewal info's `currency`;
/// `commitmentRenewalDate` is milliseconds since 1970, UTC. Enumerations keep Apple's raw value.
/// https://developer.apple.com/documentation/appstoreserverapi/renewalcommitmentinfo
public struct RenewalCommitmentInfo: Hashable, Sendable, Codable {
    /// The product the commitment renews to.
    public var commitmentAutoRenewProductId: String?
    /// `commitmentAutoRenewStatus` as sent: 1 the commitment renews, 0 it does not.
    public var rawCommitmentAutoRenewStatus: Int64?
    /// `commitmentRenewalBillingPlanType` as sent; see `commitmentRenewalBillingPlanType`.
    public var rawCommitmentRenewalBillingPlanType: String?
    /// When the commitment renews; milliseconds since 1970, UTC.
    public var commitmentRenewalDate: Int64?
    /// The renewal's price, in milliunits of the renewal info's `currency`.
    public var commitmentRenewalPrice: Int64?

    public var commitmentWillAutoRenew: Bool? { rawCommitmentAutoRenewStatus.map { $0 == 1 } }
    public var commitmentRenewalBillingPlanType: BillingPlanType? {
        rawCommitmentRenewalBillingPlanType.flatMap(BillingPlanType.init(rawValue:))
    }

    public init(
        commitmentAutoRenewProductId: String? = nil, rawCommitmentAutoRenewStatus: Int64? = nil,
        rawCommitmentRenewalBillingPlanType: String? = nil, commitmentRenewalDate: Int64? = nil, commitmentRenewalPrice: Int64? = nil
    ) {
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.rawCommitmentAutoRenewStatus = rawCommitmentAutoRenewStatus
        self.rawCommitmentRenewalBillingPlanType = rawCommitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }

    enum CodingKeys: String, CodingKey {
        case commitmentAutoRenewProductId, rawCommitmentAutoRenewStatus = "commitmentAutoRenewStatus"
        case rawCommitmentRenewalBillingPlanType = "commitmentRenewalBillingPlanType", commitmentRenewalDate, commitmentRenewalPrice
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        commitmentAutoRenewProductId = try c.decodeIfPresent(String.self, forKey: .commitmentAutoRenewProductId)
        rawCommitmentAutoRenewStatus = try c.decodeIntegerIfPresent(forKey: .rawCommitmentAutoRenewStatus)
        rawCommitmentRenewalBillingPlanType = try c.decodeIfPresent(String.self, forKey: .rawCommitmentRenewalBillingPlanType)
        commitmentRenewalDate = try c.decodeMillisecondsOrTextIfPresent(forKey: .commitmentRenewalDate)
        commitmentRenewalPrice = try c.decodeIntegerIfPresent(forKey: .commitmentRenewalPrice)
    }
}
