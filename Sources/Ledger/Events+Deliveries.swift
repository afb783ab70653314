import AppStore

/// A purchase was delivered: the user was granted what the product gives. Appended to the
/// stream `transaction-<transaction_id>` expecting no stream, so one Apple transaction is
/// delivered once, ever, whichever way it arrived (receipt, signed transaction, retry worker).
public struct PurchaseDelivered: LedgerEventPayload {
    public static let eventType = "PurchaseDelivered"
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var quantity: Int64
    public var userId: String
    public var orderId: String?
    /// `Production` or `Sandbox`, as Apple said.
    public var environment: String
    /// Milliseconds since 1970, UTC.
    public var purchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    /// Apple's price in milliunits of `currency`, when Apple gave one (signed transactions).
    public var priceMilliunits: Int64?
    public var currency: String?
    public var appAccountToken: String?
    public var appTransactionId: String?
    public var isTrial: Bool
    /// What `quantity` units of the product grant, per unit (`{"coins": 200}`).
    public var grants: [String: Int64]
    /// The submission that caused it.
    public var submissionId: String
    /// How the purchase was tied to its user and order (`MatchReason`).
    public var match: MatchReason
    /// True for a family member's access through Family Sharing (no money of its own); absent
    /// for the purchaser's own transactions and in payloads written before it was recorded.
    public var familyShared: Bool?
    /// The App Store storefront's country, ISO 3166-1 alpha-3 (`USA`), as Apple signed it
    /// (`Storefront.countryCode`); absent for a sale seen only in a receipt and in payloads
    /// written before it was recorded.
    public var storefront: String?
    /// Apple's `billingPlanType` as sent (`BILLED_UPFRONT`, `MONTHLY`, or a value Apple adds
    /// later: kept, never refused); signed transactions only, absent in payloads written before
    /// it was recorded. https://developer.apple.com/documentation/appstoreserverapi/billingplantype
    public var billingPlanType: String?
    /// Where this transaction stands in a commitment billed monthly (Apple's `commitmentInfo`):
    /// `priceMilliunits` is then the instalment, the sale; the commitment's price is never one.
    /// Absent outside a commitment and in payloads written before it was recorded.
    public var commitment: Commitment?
    /// The offer that priced it (Apple's `offerIdentifier`, a receipt's `promotional_offer_id`);
    /// absent without one and in payloads written before it was recorded.
    public var offerIdentifier: String?
    /// The offer signature that allowed it (`OfferAttribution`): the latest the ledger issued to
    /// this user for this product's offer before the purchase, still valid then. Apple names the
    /// offer, never the signature, so this is the ledger's attribution; absent when none was
    /// issued, without an offer, and in payloads written before it was recorded.
    public var offerSignatureId: String?

    /// The app Apple's evidence named; absent in events recorded before several apps (docs/several-apps.md).
    public var bundleId: String?

    public init(
        transactionId: String, originalTransactionId: String, productId: String, kind: ProductKind, quantity: Int64,
        userId: String, orderId: String?, environment: String, purchaseDateMs: Int64?, expiresDateMs: Int64?,
        priceMilliunits: Int64?, currency: String?, appAccountToken: String?, appTransactionId: String?, isTrial: Bool,
        grants: [String: Int64], submissionId: String, match: MatchReason, familyShared: Bool? = nil, storefront: String? = nil,
        billingPlanType: String? = nil, commitment: Commitment? = nil, offerIdentifier: String? = nil, offerSignatureId: String? = nil, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.kind = kind
        self.quantity = quantity
        self.userId = userId
        self.orderId = orderId
        self.environment = environment
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.isTrial = isTrial
        self.grants = grants
        self.submissionId = submissionId
        self.match = match
        self.familyShared = familyShared
        self.storefront = storefront
        self.billingPlanType = billingPlanType
        self.commitment = commitment
        self.offerIdentifier = offerIdentifier
        self.offerSignatureId = offerSignatureId
    }
}

/// How a delivered transaction was tied to its user and order; recorded so support can say why.
public enum MatchReason: String, Sendable, Hashable, Codable {
    /// The client named the order.
    case orderId = "order_id"
    /// The transaction's `app_account_token` is the order's.
    case appAccountToken = "app_account_token"
    /// No usable token: the user's open order for the same product, created before the purchase.
    case productAndTime = "product_and_time"
    /// The token names another user's order (the device switched accounts): matched among the
    /// submitting user's own open orders by product and time.
    case accountSwitched = "account_switched"
    /// No open order fits: delivered to the submitting user without an order.
    case noOrder = "no_order"
    /// A non-consumable or subscription the same user already owns, bought again or restored:
    /// it grants no units again.
    case restore = "restore"
    /// A later period of a subscription the user holds (a renewal, upgrade or resubscription)
    /// submitted by the client without an order: paid, grants no units.
    case renewal = "renewal"
    /// Restored by another user under `LEDGER_TRANSFER_POLICY=transfer`: ownership moved to
    /// them (`OwnershipTransferred`); grants no units.
    case transferred = "transferred"
}

/// A renewal of a subscription was seen in Apple's answers: a new `transaction_id` for a known
/// `original_transaction_id`. Appended to `transaction-<transaction_id>` expecting no stream,
/// like deliveries, so each renewal is recorded once.
public struct SubscriptionRenewalSeen: LedgerEventPayload {
    public static let eventType = "SubscriptionRenewalSeen"
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var userId: String
    public var environment: String
    public var purchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    public var isTrial: Bool
    public var priceMilliunits: Int64?
    public var currency: String?
    /// The submission or notification that showed it.
    public var source: String
    /// As `PurchaseDelivered.familyShared`.
    public var familyShared: Bool?
    /// As `PurchaseDelivered.storefront`.
    public var storefront: String?
    /// As `PurchaseDelivered.billingPlanType`.
    public var billingPlanType: String?
    /// As `PurchaseDelivered.commitment`: each monthly instalment of a commitment is a renewal
    /// priced by Apple's signed `price`.
    public var commitment: Commitment?

    /// The app Apple's evidence named; absent in events recorded before several apps (docs/several-apps.md).
    public var bundleId: String?

    public init(
        transactionId: String, originalTransactionId: String, productId: String, userId: String, environment: String,
        purchaseDateMs: Int64?, expiresDateMs: Int64?, isTrial: Bool, priceMilliunits: Int64?, currency: String?, source: String,
        familyShared: Bool? = nil, storefront: String? = nil, billingPlanType: String? = nil, commitment: Commitment? = nil, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.userId = userId
        self.environment = environment
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.isTrial = isTrial
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.source = source
        self.familyShared = familyShared
        self.storefront = storefront
        self.billingPlanType = billingPlanType
        self.commitment = commitment
    }
}

/// A user holds an owned product (non-consumable or subscription) from now on, keyed by its
/// `original_transaction_id`; the first event of `ownership-<original_transaction_id>`.
public struct OwnershipClaimed: LedgerEventPayload {
    public static let eventType = "OwnershipClaimed"
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var userId: String
    public var transactionId: String
    public var environment: String
    /// The app the product belongs to; nil in events recorded before several apps
    /// (docs/several-apps.md: they belong to the log's legacy app).
    public var bundleId: String?

    public init(
        originalTransactionId: String, productId: String, kind: ProductKind, userId: String, transactionId: String, environment: String,
        bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.kind = kind
        self.userId = userId
        self.transactionId = transactionId
        self.environment = environment
    }
}

/// Ownership moved to another user, under `LEDGER_TRANSFER_POLICY=transfer`.
public struct OwnershipTransferred: LedgerEventPayload {
    public static let eventType = "OwnershipTransferred"
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var fromUserId: String
    public var toUserId: String
    public var transactionId: String
    public var submissionId: String
    public var environment: String
    /// The app the product belongs to; nil in events recorded before several apps.
    public var bundleId: String?

    public init(
        originalTransactionId: String, productId: String, kind: ProductKind, fromUserId: String, toUserId: String, transactionId: String,
        submissionId: String, environment: String, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.kind = kind
        self.fromUserId = fromUserId
        self.toUserId = toUserId
        self.transactionId = transactionId
        self.submissionId = submissionId
        self.environment = environment
    }
}

/// Apple refunded or revoked a delivered transaction. Appended to `refund-<transaction_id>`
/// expecting no stream, so a refund counts once however often Apple repeats it.
///
/// A refund may be of a share (`REFUND_PRORATED`): `refundedFractionMilli` says which, and
/// `grantsTakenBack` what it took back of `grants`. A Family Sharing revocation ends access and
/// moves no money; an upgraded transaction's revocation (`upgraded`) leaves access to the new
/// plan alone and refunds only the share Apple states. Events recorded before these fields were
/// have none of them, and read as before: a refund of all of the money and all of the grants.
public struct PurchaseRefunded: LedgerEventPayload {
    public static let eventType = "PurchaseRefunded"
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var quantity: Int64
    public var userId: String
    public var environment: String
    /// What the delivery granted (balances may go negative when it is taken back).
    public var grants: [String: Int64]
    /// Apple's `cancellation_date` / `revocationDate`: milliseconds since 1970, UTC.
    public var refundedAtMs: Int64
    /// Apple's `cancellation_reason` / `revocationReason` (0 other, 1 an issue in the app).
    public var reason: Int?
    /// `refund` or `revoke` (Family Sharing revocation).
    public var revocation: String
    /// Where Apple said so: a submission id or a notification id.
    public var source: String
    /// Apple's `revocationType` as sent (`REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`, or a
    /// value Apple adds later); nil when Apple's answer had none (receipts). See `revocationType`.
    /// https://developer.apple.com/documentation/appstoreserverapi/revocationtype
    public var rawRevocationType: String?
    /// Apple's `revocationPercentage` as sent: thousandths of a percent (25000 is 25%); nil when
    /// Apple stated none.
    public var revocationPercentage: Int64?
    /// The share of the transaction's money refunded, in thousandths of a percent (25000 is 25%,
    /// 0 none: a Family Sharing revocation, an upgrade for which Apple stated no amount); nil
    /// means all of it (100000), as in every event recorded before shares were. See `fractionMilli`.
    public var refundedFractionMilli: Int64?
    /// True when the transaction ended because its subscriber upgraded within the subscription
    /// group (`isUpgraded`): access goes on under the new plan. Nil otherwise.
    public var upgraded: Bool?
    /// What was taken back of `grants` when that is less than all of it:
    /// ceil(grant × `refundedFractionMilli` / 100000) per unit, units of 0 left out. Nil means all
    /// of `grants`. See `unitsTakenBack`.
    public var grantsTakenBack: [String: Int64]?
    /// The app of the refunded purchase: its balances lose what the refund takes back. Nil in
    /// events recorded before several apps.
    public var bundleId: String?

    enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, productId, kind, quantity, userId, environment, grants, refundedAtMs, reason
        case revocation, source, rawRevocationType = "revocationType", revocationPercentage, refundedFractionMilli, upgraded
        case grantsTakenBack, bundleId
    }

    public init(
        transactionId: String, originalTransactionId: String, productId: String, kind: ProductKind, quantity: Int64,
        userId: String, environment: String, grants: [String: Int64], refundedAtMs: Int64, reason: Int?, revocation: String, source: String,
        rawRevocationType: String? = nil, revocationPercentage: Int64? = nil, refundedFractionMilli: Int64? = nil, upgraded: Bool? = nil,
        grantsTakenBack: [String: Int64]? = nil, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.kind = kind
        self.quantity = quantity
        self.userId = userId
        self.environment = environment
        self.grants = grants
        self.refundedAtMs = refundedAtMs
        self.reason = reason
        self.revocation = revocation
        self.source = source
        self.rawRevocationType = rawRevocationType
        self.revocationPercentage = revocationPercentage
        self.refundedFractionMilli = refundedFractionMilli
        self.upgraded = upgraded
        self.grantsTakenBack = grantsTakenBack
    }

    /// `rawRevocationType`, typed; nil when absent or a value this build does not know.
    public var revocationType: RevocationType? { rawRevocationType.flatMap(RevocationType.init(rawValue:)) }

    /// The share of the transaction's money refunded, in thousandths of a percent (100000: all).
    public var fractionMilli: Int64 { refundedFractionMilli ?? RefundFraction.whole }

    /// The units taken back from the user's balances (a reversal gives exactly these back).
    public var unitsTakenBack: [String: Int64] { grantsTakenBack ?? grants }

    /// False for an upgrade: the subscriber keeps access under the new plan.
    public var endsAccess: Bool { upgraded != true }
}

/// Apple reversed a refund (REFUND_REVERSED): the grant, the entitlement and the revenue come
/// back, the revenue dated the day of the reversal, so the refund's period is not rewritten.
/// The second event of the refund's stream, appended expecting version 1: reversed once.
public struct RefundReversed: LedgerEventPayload {
    public static let eventType = "RefundReversed"
    /// The refund reversed, as it was recorded.
    public var refund: PurchaseRefunded
    /// When Apple reversed it (the notification's `signedDate`): milliseconds since 1970, UTC.
    public var reversedAtMs: Int64
    /// The notification that said so.
    public var source: String

    public init(refund: PurchaseRefunded, reversedAtMs: Int64, source: String) {
        self.refund = refund
        self.reversedAtMs = reversedAtMs
        self.source = source
    }
}
