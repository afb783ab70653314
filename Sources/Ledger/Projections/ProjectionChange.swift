/// One change a projection makes to its rows for one event. Projections are pure: each maps an
/// event to changes, and the service turns changes into SQL inside the transaction that also
/// moves the projection's checkpoint. Every change is commutative or "newest wins" by Apple's
/// own timestamps, so replaying the same events always yields the same rows.
public enum ProjectionChange: Sendable, Hashable {
    /// Adds `delta` (negative for a refund) to a user's balance of `unit` in the app
    /// `bundleId`. A nil app is an event's recorded before several apps: the runner writes it
    /// as the log's legacy app (docs/several-apps.md), which the log names, not the projection.
    case addToBalance(bundleId: String?, userId: String, unit: String, delta: Int64)
    /// `userId` holds the owned product `originalTransactionId` of the app `bundleId` (nil as
    /// above) from now on.
    case setOwner(originalTransactionId: String, bundleId: String?, userId: String, productId: String, kind: ProductKind, environment: String)
    /// Apple refunded or revoked the owned product: access ends at `atMs`.
    case revokeOwnership(originalTransactionId: String, atMs: Int64)
    /// A reversed refund gives the entitlement back.
    case restoreOwnership(originalTransactionId: String)
    /// A reversed refund of a subscription period: the period counts again.
    case clearSubscriptionCancellation(originalTransactionId: String, transactionId: String)
    /// A transaction of a subscription, merged with what was known of it.
    case mergeSubscriptionEntry(originalTransactionId: String, environment: String, entry: SubscriptionEntry)
    /// A subscription's renewal state, kept when newer than the stored one.
    case observeRenewal(originalTransactionId: String, renewal: RenewalObservation)
    /// A renewal state Apple signed, kept beside every other one (`SubscriptionHistoryProjection`).
    case recordRenewalObservation(originalTransactionId: String, renewal: RenewalObservation)
    /// Who holds `originalTransactionId` from the event at `place` on (nil: nobody, refunded or
    /// revoked), and why; the newest position wins and every change is kept as history.
    case changeOwner(originalTransactionId: String, bundleId: String?, productId: String, kind: ProductKind, environment: String,
                     userId: String?, reason: String, place: EventPlace)
    /// These original transactions belong to one Apple account (seen in one receipt, or one
    /// purchase carrying `appTransactionId`): their groups are united.
    case linkAppleAccount(originalTransactionIds: [String], appTransactionId: String?)
    /// The catalog's reference price of a product of the app `bundleId` (nil: the legacy app)
    /// from now on (used when Apple gives none).
    case setCatalogPrice(bundleId: String?, productId: String, priceMinor: Int64, currency: String, effectiveMs: Int64)
    /// A paid transaction's revenue line, recorded once.
    case addRevenueSale(RevenueSale)
    /// The refund of `fractionMilli` (thousandths of a percent; 100000 all of it) of a
    /// transaction's sale line at `atMs` (dated that UTC day), recorded once.
    case addRevenueRefund(transactionId: String, atMs: Int64, fractionMilli: Int64 = 100_000)
    /// A reversed refund: what the refund took (`fractionMilli` of the sale) counts again,
    /// dated the day of the reversal.
    case addRevenueReversal(transactionId: String, atMs: Int64, fractionMilli: Int64 = 100_000)
    /// What Apple's Get Transaction Info said of a transaction, kept whether or not its sale
    /// line exists yet: its lines (sale, refund, reversal) whose country is unknown take
    /// `country`, and those priced from the catalog take `applePrice` (a refund's or reversal's
    /// its share of it); a sale line added later takes both as if its event had carried them.
    case setRevenueTransactionInfo(transactionId: String, country: String?, applePrice: Money?)
    /// A product's price points as read at `refreshedAtMs`: the table that prices its sales
    /// purchased from then until the next refresh (and those before its first refresh, if this
    /// is the first); only points with a customer price and proceeds are kept.
    /// `bundleId` "" for a log that names no app yet, as revenue lines have it.
    case setPricePoints(bundleId: String, productId: String, refreshedAtMs: Int64, points: [PricePointsRefreshed.Point])
    /// The event at `position` concerns `subject` (TimelineProjection's names).
    case timelineEvent(subject: String, position: Int64)
    /// `subject`'s timeline includes everything of `includes`.
    case timelineLink(subject: String, includes: String)
    /// A webhook message, recorded once (by its position and sequence).
    case addWebhookEvent(WebhookEvent)
}

/// Where an event sits in the log, for projections that keep history.
public struct EventPlace: Sendable, Hashable {
    public var position: Int64
    /// Milliseconds since 1970, UTC, when the event was recorded.
    public var recordedAtMs: Int64
    /// The event's chain hash (32 bytes): what tells this event apart from another written at
    /// the same position after a restore (webhook ids name it). Empty only in tests of pure
    /// folds that never look at it.
    public var hash: [UInt8]

    public init(position: Int64, recordedAtMs: Int64, hash: [UInt8] = []) {
        self.position = position
        self.recordedAtMs = recordedAtMs
        self.hash = hash
    }
}

/// A read model: a name, a version (bump it when `changes(for:)` changes, and the projection is
/// rebuilt from the first event), and a pure function from events to row changes.
public protocol Projection: Sendable {
    var name: String { get }
    var version: Int32 { get }
    /// The tables it owns, emptied before a rebuild.
    var tables: [String] { get }
    /// Of `tables`, those whose every column is in their key and whose rows are only inserted
    /// with `ON CONFLICT DO NOTHING` (no conflict target): a rebuild may fill them without their
    /// indexes and, at the end, drop repeated rows and index them in one sorted pass each.
    var setTables: [String] { get }
    func changes(for event: LedgerEvent, at place: EventPlace) -> [ProjectionChange]
}

extension Projection {
    public var setTables: [String] { [] }
}

/// A projection whose rows do not depend on where its events sit in the log.
public protocol PlacelessProjection: Projection {
    func changes(for event: LedgerEvent) -> [ProjectionChange]
}

extension PlacelessProjection {
    public func changes(for event: LedgerEvent, at place: EventPlace) -> [ProjectionChange] { changes(for: event) }
}

/// Balances per app, user and grant unit: credits from deliveries, debits from refunds of
/// consumables (what each took back: all of the grant, or the share of a prorated refund) and
/// from spends. Named `app_balances` since balances became per app (migration 0029): the
/// previous release's `balances`, keyed by user and unit, keeps its own table and checkpoint
/// while that release still serves beside this one.
public struct BalancesProjection: PlacelessProjection {
    public init() {}
    public let name = "app_balances"
    public let version: Int32 = 1
    public let tables = ["projection_app_balances"]

    public func changes(for event: LedgerEvent) -> [ProjectionChange] {
        switch event {
        case .purchaseDelivered(let d):
            return d.grants.sorted { $0.key < $1.key }.map { .addToBalance(bundleId: d.bundleId, userId: d.userId, unit: $0.key, delta: $0.value) }
        case .purchaseRefunded(let r) where r.kind == .consumable:
            return r.unitsTakenBack.sorted { $0.key < $1.key }.map { .addToBalance(bundleId: r.bundleId, userId: r.userId, unit: $0.key, delta: -$0.value) }
        case .balanceSpent(let s):
            return [.addToBalance(bundleId: s.bundleId, userId: s.userId, unit: s.unit, delta: -s.amount)]
        case .refundReversed(let v) where v.refund.kind == .consumable:
            return v.refund.unitsTakenBack.sorted { $0.key < $1.key }.map { .addToBalance(bundleId: v.refund.bundleId, userId: v.refund.userId, unit: $0.key, delta: $0.value) }
        default:
            return []
        }
    }
}

/// Entitlements: the owned products (non-consumables, subscriptions) each user holds, by
/// `original_transaction_id`.
public struct EntitlementsProjection: PlacelessProjection {
    public init() {}
    public let name = "entitlements"
    public let version: Int32 = 1
    public let tables = ["projection_entitlements"]

    public func changes(for event: LedgerEvent) -> [ProjectionChange] {
        switch event {
        case .ownershipClaimed(let c):
            return [.setOwner(originalTransactionId: c.originalTransactionId, bundleId: c.bundleId, userId: c.userId, productId: c.productId, kind: c.kind, environment: c.environment)]
        case .ownershipTransferred(let t):
            return [.setOwner(originalTransactionId: t.originalTransactionId, bundleId: t.bundleId, userId: t.toUserId, productId: t.productId, kind: t.kind, environment: t.environment)]
        case .purchaseRefunded(let r) where r.kind == .nonConsumable || r.kind == .nonRenewing:
            return [.revokeOwnership(originalTransactionId: r.originalTransactionId, atMs: r.refundedAtMs)]
        case .refundReversed(let v) where v.refund.kind == .nonConsumable || v.refund.kind == .nonRenewing:
            return [.restoreOwnership(originalTransactionId: v.refund.originalTransactionId)]
        default:
            return []
        }
    }
}

/// Subscriptions per `original_transaction_id`: every transaction Apple showed of it and its
/// newest renewal state; `SubscriptionSummary` turns them into status, expiry and where a
/// commitment stands.
public struct SubscriptionsProjection: PlacelessProjection {
    public init() {}
    public let name = "subscriptions"
    /// 2: an upgraded transaction's revocation marks its entry upgraded, so it ends no access.
    /// 3: each entry keeps Apple's billing plan, commitment and price (commitment plans).
    /// 4: an extended renewal date moves its period's end.
    public let version: Int32 = 4
    public let tables = ["projection_subscription_entries", "projection_subscription_renewals"]

    public func changes(for event: LedgerEvent) -> [ProjectionChange] {
        switch event {
        case .purchaseDelivered(let d) where d.kind == .autoRenewable:
            return [.mergeSubscriptionEntry(originalTransactionId: d.originalTransactionId, environment: d.environment, entry: SubscriptionEntry(
                transactionId: d.transactionId, productId: d.productId, purchaseDateMs: d.purchaseDateMs, expiresDateMs: d.expiresDateMs,
                cancellationDateMs: nil, isTrial: d.isTrial, isUpgraded: false, billingPlanType: d.billingPlanType,
                commitment: d.commitment, priceMilliunits: d.priceMilliunits, currency: d.currency))]
        case .subscriptionRenewalSeen(let r):
            return [.mergeSubscriptionEntry(originalTransactionId: r.originalTransactionId, environment: r.environment, entry: SubscriptionEntry(
                transactionId: r.transactionId, productId: r.productId, purchaseDateMs: r.purchaseDateMs, expiresDateMs: r.expiresDateMs,
                cancellationDateMs: nil, isTrial: r.isTrial, isUpgraded: false, billingPlanType: r.billingPlanType,
                commitment: r.commitment, priceMilliunits: r.priceMilliunits, currency: r.currency))]
        case .subscriptionObserved(let o):
            var changes = o.entries.map { ProjectionChange.mergeSubscriptionEntry(originalTransactionId: o.originalTransactionId, environment: o.environment, entry: $0) }
            if let renewal = o.renewal { changes.append(.observeRenewal(originalTransactionId: o.originalTransactionId, renewal: renewal)) }
            return changes
        case .purchaseRefunded(let r) where r.kind == .autoRenewable:
            // An upgraded transaction ends early but gives way to the new plan's: it stays
            // marked upgraded, which no summary counts as an end of access.
            return [.mergeSubscriptionEntry(originalTransactionId: r.originalTransactionId, environment: r.environment, entry: SubscriptionEntry(
                transactionId: r.transactionId, productId: r.productId, purchaseDateMs: nil, expiresDateMs: nil,
                cancellationDateMs: r.refundedAtMs, isTrial: false, isUpgraded: !r.endsAccess))]
        case .refundReversed(let v) where v.refund.kind == .autoRenewable && v.refund.endsAccess:
            return [.clearSubscriptionCancellation(originalTransactionId: v.refund.originalTransactionId, transactionId: v.refund.transactionId)]
        case .subscriptionRenewalExtended(let e) where e.extended:
            // The period Apple extended ends later; the merge keeps the latest end, so Apple's
            // RENEWAL_EXTENDED notification showing the same date changes nothing more.
            return [.mergeSubscriptionEntry(originalTransactionId: e.originalTransactionId, environment: e.environment, entry: SubscriptionEntry(
                transactionId: e.transactionId, productId: e.productId, purchaseDateMs: nil, expiresDateMs: e.effectiveDateMs,
                cancellationDateMs: nil, isTrial: false, isUpgraded: false))]
        default:
            return []
        }
    }
}

public enum Projections {
    /// Every projection the ledger maintains, in the order they are applied.
    public static let all: [any Projection] = [BalancesProjection(), EntitlementsProjection(), SubscriptionsProjection(), OwnershipProjection(), RevenueProjection(), TimelineProjection(),
        WebhookEventsProjection(), SubscriptionHistoryProjection(),
    ]
}
