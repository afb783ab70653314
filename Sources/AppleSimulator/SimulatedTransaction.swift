import Foundation

/// One App Store transaction as the simulator keeps it: a purchase, a renewal or an upgrade.
///
/// Times are milliseconds since 1970 (UTC) on the simulated clock. Ids are numeric strings as
/// Apple's are. The record is mutated only by refunds, revocations, upgrades, `finish`,
/// renewal-date extensions (`expiresDateMs`) and Set App Account Token.
public struct SimulatedTransaction: Sendable, Codable, Hashable {
    public var transactionId: String
    /// Stable across renewals, upgrades and re-subscriptions within one subscription group.
    public var originalTransactionId: String
    /// One per subscription period; nil for non-subscriptions.
    public var webOrderLineItemId: String?
    public var appleId: String
    public var environment: SimulatedEnvironment
    public var bundleId: String
    public var productId: String
    public var kind: SimulatedProduct.Kind
    public var quantity: Int
    public var purchaseDateMs: Int64
    public var originalPurchaseDateMs: Int64
    /// End of the period this transaction paid for; subscriptions only.
    public var expiresDateMs: Int64?
    public var isTrialPeriod: Bool
    public var isInIntroOfferPeriod: Bool
    /// Set on the old transaction when its plan was upgraded within the group.
    public var isUpgraded: Bool
    /// Refund, revocation or upgrade time (`cancellation_date_ms`); JWS `revocationDate` for
    /// refunds and revocations.
    public var cancellationDateMs: Int64?
    /// `cancellation_reason`: 0 other, 1 an issue in the app. Nil for upgrades and Family
    /// Sharing revocations.
    public var cancellationReason: Int?
    /// True once the app called `finishTransaction`; finished consumables leave new receipts.
    public var isFinished: Bool
    /// Made on the device (and so in the receipt's `in_app`), as opposed to a renewal.
    public var isDevicePurchase: Bool
    public var appAccountToken: UUID?
    public var subscriptionGroup: String?
    /// Price paid in milliunits of `currency`, the storefront's (`PriceTerritory.equivalentPrice`);
    /// 0 during a free trial.
    public var priceMilliunits: Int64
    public var currency: String
    /// "PURCHASE" or "RENEWAL", as JWS `transactionReason`.
    public var transactionReason: String
    /// JWS `revocationType`: "REFUND_FULL" once refunded in full, "REFUND_PRORATED" once a share
    /// was refunded (`revocationPercentage`), "FAMILY_REVOKE" once revoked through Family
    /// Sharing; nil otherwise.
    /// See https://developer.apple.com/documentation/appstoreserverapi/revocationtype
    public var revocationType: String?
    /// Apple's order id, as on the customer's emailed receipt and in Look Up Order ID: ten
    /// uppercase letters and digits, e.g. "MK5TTTVWJH". Every transaction has its own, renewals
    /// included (Apple emails a receipt for each renewal), so an order holds one transaction.
    /// See https://developer.apple.com/documentation/appstoreserverapi/look-up-order-id
    public var orderId: String
    /// The storefront it was bought in (ISO 3166-1 alpha-3): its Apple ID's at the time.
    public var storefront: String = SimulatedStorefront.defaultCountry
    /// JWS `billingPlanType`: "MONTHLY" for a period billed against a commitment; nil for a
    /// product billed up front. See `SimulatedCommitment`.
    public var billingPlanType: String? = nil
    /// JWS `commitmentInfo`: where this period stands in its commitment; nil outside one.
    public var commitment: SimulatedCommitment? = nil
    /// JWS `revocationPercentage`: the share a prorated refund (`REFUND_PRORATED`) gave back, in
    /// thousandths of a percent (25000 is 25 %, 1...99999); nil for a full refund and otherwise.
    /// See https://developer.apple.com/documentation/appstoreserverapi/revocationpercentage
    public var revocationPercentage: Int64? = nil
    /// JWS `offerType` of an offer other than the free trial: 2 for a promotional offer redeemed
    /// at purchase (`OfferRedemption`); nil otherwise (a free trial signs 1 from `isTrialPeriod`).
    /// See https://developer.apple.com/documentation/appstoreserverapi/offertype
    public var offerType: Int? = nil
    /// JWS `offerIdentifier`: the promotional offer's id as set up in App Store Connect; nil
    /// without one. See https://developer.apple.com/documentation/appstoreserverapi/offeridentifier
    public var offerIdentifier: String? = nil

    /// True when the transaction was refunded or revoked (not merely upgraded).
    public var isRefunded: Bool { cancellationDateMs != nil && !isUpgraded }
}
