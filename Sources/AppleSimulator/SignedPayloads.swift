import Foundation

/// The payload of a StoreKit 2 signed transaction, as Apple's `JWSTransactionDecodedPayload`.
///
/// Dates are milliseconds since 1970 (UTC); `price` is in milliunits of `currency`.
/// See https://developer.apple.com/documentation/appstoreserverapi/jwstransactiondecodedpayload
struct SignedTransactionPayload: Encodable, Sendable {
    var transactionId: String
    var originalTransactionId: String
    var webOrderLineItemId: String?
    var bundleId: String
    var productId: String
    var subscriptionGroupIdentifier: String?
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64?
    var quantity: Int
    var type: String
    var appAccountToken: String?
    /// One per Apple account and app, the same in every transaction of that account.
    var appTransactionId: String
    var inAppOwnershipType: String
    var signedDate: Int64
    /// 0 other, 1 an issue in the app; nil when not refunded, and for Family Sharing revocations.
    var revocationReason: Int?
    var revocationDate: Int64?
    /// "REFUND_FULL", "REFUND_PRORATED" or "FAMILY_REVOKE"; nil when neither refunded nor revoked.
    var revocationType: String?
    /// The share a prorated refund gave back, in thousandths of a percent (25000 is 25 %); nil
    /// (omitted) otherwise.
    var revocationPercentage: Int64?
    var isUpgraded: Bool?
    /// 1 introductory offer (the free trial here), 2 promotional offer; nil without an offer.
    var offerType: Int?
    /// The promotional offer's id; nil (omitted) without one.
    var offerIdentifier: String?
    var environment: String
    var transactionReason: String
    var storefront: String
    /// Apple's numeric id of the storefront; nil for one the simulator has no id for.
    var storefrontId: String?
    var price: Int64
    var currency: String
    /// "MONTHLY" for a period billed against a commitment; nil (omitted) for a product billed
    /// up front. https://developer.apple.com/documentation/appstoreserverapi/billingplantype
    var billingPlanType: String?
    /// Where the period stands in its commitment; nil (omitted) outside one.
    var commitmentInfo: CommitmentInfo?

    /// Apple's `TransactionCommitmentInfo`: `commitmentPrice` in milliunits of `currency`,
    /// `commitmentExpiresDate` in milliseconds since 1970.
    struct CommitmentInfo: Encodable, Sendable {
        var billingPeriodNumber: Int
        var totalBillingPeriods: Int
        var commitmentPrice: Int64
        var commitmentExpiresDate: Int64
    }

    init(_ t: SimulatedTransaction, signedDate: Int64) {
        transactionId = t.transactionId
        originalTransactionId = t.originalTransactionId
        webOrderLineItemId = t.webOrderLineItemId
        bundleId = t.bundleId
        productId = t.productId
        subscriptionGroupIdentifier = t.subscriptionGroup
        purchaseDate = t.purchaseDateMs
        originalPurchaseDate = t.originalPurchaseDateMs
        expiresDate = t.expiresDateMs
        quantity = t.quantity
        type = t.kind.jwsType
        appAccountToken = t.appAccountToken?.uuidString.lowercased()
        appTransactionId = Self.appTransactionId(appleId: t.appleId, bundleId: t.bundleId)
        inAppOwnershipType = "PURCHASED"
        self.signedDate = signedDate
        revocationReason = t.isRefunded ? t.cancellationReason : nil
        revocationDate = t.isRefunded ? t.cancellationDateMs : nil
        revocationType = t.isRefunded ? t.revocationType : nil
        revocationPercentage = t.isRefunded ? t.revocationPercentage : nil
        isUpgraded = t.isUpgraded ? true : nil
        offerType = t.offerType ?? (t.isTrialPeriod ? 1 : nil)
        offerIdentifier = t.offerIdentifier
        environment = t.environment.rawValue
        transactionReason = t.transactionReason
        storefront = t.storefront
        storefrontId = SimulatedStorefront.ids[t.storefront]
        price = t.priceMilliunits
        currency = t.currency
        billingPlanType = t.billingPlanType
        commitmentInfo = t.commitment.map {
            CommitmentInfo(
                billingPeriodNumber: $0.billingPeriodNumber, totalBillingPeriods: $0.totalBillingPeriods,
                commitmentPrice: $0.commitmentPriceMilliunits, commitmentExpiresDate: $0.commitmentExpiresDateMs)
        }
    }

    /// A stable 18-digit id like Apple's, derived from the account and app (FNV-1a), so a
    /// restart of the simulator names an account as before.
    static func appTransactionId(appleId: String, bundleId: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (appleId + "\u{0}" + bundleId).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash % 10_000_000_000_000_000)
        return "70" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The payload of a signed renewal info, as Apple's `JWSRenewalInfoDecodedPayload`.
/// See https://developer.apple.com/documentation/appstoreserverapi/jwsrenewalinfodecodedpayload
struct SignedRenewalInfoPayload: Encodable, Sendable {
    var originalTransactionId: String
    var productId: String
    var autoRenewProductId: String
    /// 1 on, 0 off.
    var autoRenewStatus: Int
    var expirationIntent: Int?
    var isInBillingRetryPeriod: Bool?
    var gracePeriodExpiresDate: Int64?
    var renewalDate: Int64?
    /// Price of the next period in milliunits of `currency`.
    var renewalPrice: Int64?
    var currency: String?
    var recentSubscriptionStartDate: Int64
    var signedDate: Int64
    var environment: String
    /// "MONTHLY" when the next renewal bills against a commitment; nil (omitted) otherwise.
    var renewalBillingPlanType: String?
    /// What the current commitment renews into; nil (omitted) outside a commitment.
    var commitmentInfo: CommitmentInfo?

    /// Apple's `RenewalCommitmentInfo`, as the simulator reads it: the product and plan the
    /// commitment renews to at its end (`commitmentRenewalDate`, milliseconds since 1970, absent
    /// once the subscription ended), whether it will (1) or not (0), and the instalment the
    /// renewed commitment bills (`commitmentRenewalPrice`, milliunits of `currency`).
    struct CommitmentInfo: Encodable, Sendable {
        var commitmentAutoRenewProductId: String
        var commitmentAutoRenewStatus: Int
        var commitmentRenewalBillingPlanType: String
        var commitmentRenewalDate: Int64?
        var commitmentRenewalPrice: Int64?
    }

    /// The renewal info of `s`, whose next period bills `renewalProduct` in `storefront` (the
    /// Apple ID's now): `renewalPrice` and `currency` are that storefront's, as the renewal's
    /// transaction will be (`PriceTerritory.equivalentPrice`).
    init(
        _ s: SimulatedSubscription, renewalProduct: SimulatedProduct?, storefront: String, startMs: Int64,
        signedDate: Int64
    ) {
        let renewal = renewalProduct.map { PriceTerritory.equivalentPrice(of: $0, in: storefront) }
        originalTransactionId = s.originalTransactionId
        productId = s.productId
        autoRenewProductId = s.autoRenewProductId
        autoRenewStatus = s.autoRenewEnabled ? 1 : 0
        expirationIntent = s.expirationIntent
        isInBillingRetryPeriod = s.expirationIntent == 2 ? s.billingRetrySinceMs != nil : nil
        gracePeriodExpiresDate = s.gracePeriodExpiresDateMs
        renewalDate = s.hasEnded ? nil : s.expiresDateMs
        renewalPrice = renewal?.milliunits
        currency = renewal?.currency
        recentSubscriptionStartDate = startMs
        self.signedDate = signedDate
        environment = s.environment.rawValue
        let renewsCommitted = renewalProduct?.commitmentPeriods != nil
        renewalBillingPlanType = renewsCommitted ? SimulatedCommitment.monthlyPlan : nil
        commitmentInfo = s.commitment.map {
            CommitmentInfo(
                commitmentAutoRenewProductId: s.autoRenewProductId, commitmentAutoRenewStatus: s.autoRenewEnabled ? 1 : 0,
                commitmentRenewalBillingPlanType: renewsCommitted ? SimulatedCommitment.monthlyPlan : "BILLED_UPFRONT",
                commitmentRenewalDate: s.hasEnded ? nil : $0.commitmentExpiresDateMs,
                commitmentRenewalPrice: renewal?.milliunits)
        }
    }
}

/// The payload of a v2 notification's `signedPayload`, as Apple's `ResponseBodyV2DecodedPayload`.
/// See https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload
struct NotificationV2Payload: Encodable, Sendable {
    struct DataBody: Encodable, Sendable {
        var appAppleId: Int64
        var bundleId: String
        var bundleVersion: String
        var environment: String
        var signedTransactionInfo: String
        var signedRenewalInfo: String?
        /// Subscription status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
        var status: Int?
        /// Only on CONSUMPTION_REQUEST: why the customer asked for a refund.
        /// See https://developer.apple.com/documentation/appstoreservernotifications/consumptionrequestreason
        var consumptionRequestReason: String?
    }

    var notificationType: String
    var subtype: String?
    var notificationUUID: String
    var data: DataBody
    var version: String
    var signedDate: Int64
}
