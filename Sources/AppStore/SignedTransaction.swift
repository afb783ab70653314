/// The decoded payload of a signed transaction (`JWSTransaction`): inside a v2 notification's
/// `signedTransactionInfo`, a StoreKit 2 `jwsRepresentation`, or an App Store Server API answer.
///
/// Dates are milliseconds since 1970, UTC (a fraction of a millisecond, as Xcode's StoreKit
/// testing signs, is dropped). `price` is in milliunits of `currency` (10990 = 10.99 USD).
/// Enumerations keep Apple's raw value, so one Apple adds later is kept, never refused; unknown
/// fields are ignored (the verified JWS payload bytes are kept by `Verified`).
/// https://developer.apple.com/documentation/appstoreserverapi/jwstransactiondecodedpayload
public struct SignedTransaction: Hashable, Sendable, Codable {
    public var transactionId: String?
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    /// Milliseconds since 1970, UTC.
    public var purchaseDate: Int64?
    public var originalPurchaseDate: Int64?
    public var expiresDate: Int64?
    public var quantity: Int64?
    /// `type` as sent; see `type`.
    public var rawType: String?
    /// The UUID the app passed to StoreKit (`appAccountToken`), lower-case text as sent.
    public var appAccountToken: String?
    public var rawInAppOwnershipType: String?
    /// When Apple signed this payload; milliseconds since 1970, UTC. Chains are checked at it.
    public var signedDate: Int64?
    public var rawRevocationReason: Int?
    /// When Apple refunded or revoked it; milliseconds since 1970, UTC.
    public var revocationDate: Int64?
    public var isUpgraded: Bool?
    public var rawOfferType: Int?
    public var offerIdentifier: String?
    public var rawEnvironment: String?
    /// Three-letter country code of the App Store storefront (`USA`), and Apple's storefront id.
    public var storefront: String?
    public var storefrontId: String?
    public var rawTransactionReason: String?
    /// Price in milliunits of `currency`, tax included.
    public var price: Int64?
    /// ISO 4217 currency code of `price`.
    public var currency: String?
    public var rawOfferDiscountType: String?
    public var appTransactionId: String?
    /// ISO 8601 duration of the offer (`P1Y`).
    public var offerPeriod: String?
    public var rawRevocationType: String?
    /// Refunded share in thousandths of a percent (50000 = 50 %).
    public var revocationPercentage: Int64?
    /// `billingPlanType` as sent; see `billingPlanType`.
    public var rawBillingPlanType: String?
    /// Where this transaction stands in a commitment billed monthly (API 1.21); nil outside one.
    /// https://developer.apple.com/documentation/appstoreserverapi/transactioncommitmentinfo
    public var commitmentInfo: TransactionCommitmentInfo?

    public var type: ProductType? { rawType.flatMap(ProductType.init(rawValue:)) }
    public var inAppOwnershipType: InAppOwnershipType? { rawInAppOwnershipType.flatMap(InAppOwnershipType.init(rawValue:)) }
    public var revocationReason: RevocationReason? { rawRevocationReason.flatMap(RevocationReason.init(rawValue:)) }
    public var offerType: OfferType? { rawOfferType.flatMap(OfferType.init(rawValue:)) }
    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(appleValue:)) }
    public var transactionReason: TransactionReason? { rawTransactionReason.flatMap(TransactionReason.init(rawValue:)) }
    public var offerDiscountType: OfferDiscountType? { rawOfferDiscountType.flatMap(OfferDiscountType.init(rawValue:)) }
    public var revocationType: RevocationType? { rawRevocationType.flatMap(RevocationType.init(rawValue:)) }
    public var billingPlanType: BillingPlanType? { rawBillingPlanType.flatMap(BillingPlanType.init(rawValue:)) }

    enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, webOrderLineItemId, bundleId, productId
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity
        case rawType = "type", appAccountToken, rawInAppOwnershipType = "inAppOwnershipType", signedDate
        case rawRevocationReason = "revocationReason", revocationDate, isUpgraded
        case rawOfferType = "offerType", offerIdentifier, rawEnvironment = "environment"
        case storefront, storefrontId, rawTransactionReason = "transactionReason", price, currency
        case rawOfferDiscountType = "offerDiscountType", appTransactionId, offerPeriod
        case rawRevocationType = "revocationType", revocationPercentage, rawBillingPlanType = "billingPlanType"
        case commitmentInfo
    }
}

// By hand only so that dates may carry a fraction of a millisecond; in an extension, so the
// memberwise initializer stays.
extension SignedTransaction {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        transactionId = try c.decodeIfPresent(String.self, forKey: .transactionId)
        originalTransactionId = try c.decodeIfPresent(String.self, forKey: .originalTransactionId)
        webOrderLineItemId = try c.decodeIfPresent(String.self, forKey: .webOrderLineItemId)
        bundleId = try c.decodeIfPresent(String.self, forKey: .bundleId)
        productId = try c.decodeIfPresent(String.self, forKey: .productId)
        subscriptionGroupIdentifier = try c.decodeIfPresent(String.self, forKey: .subscriptionGroupIdentifier)
        purchaseDate = try c.decodeMillisecondsIfPresent(forKey: .purchaseDate)
        originalPurchaseDate = try c.decodeMillisecondsIfPresent(forKey: .originalPurchaseDate)
        expiresDate = try c.decodeMillisecondsIfPresent(forKey: .expiresDate)
        quantity = try c.decodeIfPresent(Int64.self, forKey: .quantity)
        rawType = try c.decodeIfPresent(String.self, forKey: .rawType)
        appAccountToken = try c.decodeIfPresent(String.self, forKey: .appAccountToken)
        rawInAppOwnershipType = try c.decodeIfPresent(String.self, forKey: .rawInAppOwnershipType)
        signedDate = try c.decodeMillisecondsIfPresent(forKey: .signedDate)
        rawRevocationReason = try c.decodeIfPresent(Int.self, forKey: .rawRevocationReason)
        revocationDate = try c.decodeMillisecondsIfPresent(forKey: .revocationDate)
        isUpgraded = try c.decodeIfPresent(Bool.self, forKey: .isUpgraded)
        rawOfferType = try c.decodeIfPresent(Int.self, forKey: .rawOfferType)
        offerIdentifier = try c.decodeIfPresent(String.self, forKey: .offerIdentifier)
        rawEnvironment = try c.decodeIfPresent(String.self, forKey: .rawEnvironment)
        storefront = try c.decodeIfPresent(String.self, forKey: .storefront)
        storefrontId = try c.decodeIfPresent(String.self, forKey: .storefrontId)
        rawTransactionReason = try c.decodeIfPresent(String.self, forKey: .rawTransactionReason)
        price = try c.decodeIfPresent(Int64.self, forKey: .price)
        currency = try c.decodeIfPresent(String.self, forKey: .currency)
        rawOfferDiscountType = try c.decodeIfPresent(String.self, forKey: .rawOfferDiscountType)
        appTransactionId = try c.decodeIfPresent(String.self, forKey: .appTransactionId)
        offerPeriod = try c.decodeIfPresent(String.self, forKey: .offerPeriod)
        rawRevocationType = try c.decodeIfPresent(String.self, forKey: .rawRevocationType)
        revocationPercentage = try c.decodeIfPresent(Int64.self, forKey: .revocationPercentage)
        rawBillingPlanType = try c.decodeIfPresent(String.self, forKey: .rawBillingPlanType)
        // Leniently: a block Apple added late (its own libraries lagged behind it) whose shape
        // this build cannot read is left out rather than refusing the purchase, which does not
        // depend on it; the signed bytes are kept verbatim.
        commitmentInfo = try? c.decodeIfPresent(TransactionCommitmentInfo.self, forKey: .commitmentInfo)
    }
}
