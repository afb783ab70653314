/// One app as the ledger was configured to serve it.
public struct ConfiguredApp: Codable, Sendable, Hashable {
    public var bundleId: String
    /// The app's numeric Apple id, when configured.
    public var appAppleId: Int64?

    public init(bundleId: String, appAppleId: Int64? = nil) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
    }
}

/// The apps the ledger serves changed (or were recorded for the first time): `serve` appends
/// it at start when its configuration differs from the last one recorded, in stream `apps`.
/// It is how the log itself says which app its events without `bundle_id` belong to
/// (docs/several-apps.md), so that a replay never depends on the configuration of its day.
public struct AppsConfigured: LedgerEventPayload {
    public static let eventType = "AppsConfigured"
    /// The apps served from this event on, in the order configured.
    public var apps: [ConfiguredApp]
    /// The app the events recorded before several apps belong to (those with no `bundle_id`):
    /// named by the first `AppsConfigured` of a log that already held events, and repeated by
    /// every later one so a reader needs only the latest; nil in a log that began with it.
    public var legacyBundleId: String?

    public init(apps: [ConfiguredApp], legacyBundleId: String?) {
        self.apps = apps
        self.legacyBundleId = legacyBundleId
    }
}

extension LedgerEvent {
    /// Whether this is an event that names its app from the several-apps release on, recorded
    /// before it (no `bundle_id`): projections write it under the log's legacy app
    /// (docs/several-apps.md). Events that never name an app are not among them.
    public var recordedWithoutApp: Bool {
        switch self {
        case .orderCreated(let e): e.bundleId == nil
        case .purchaseDelivered(let e): e.bundleId == nil
        case .subscriptionRenewalSeen(let e): e.bundleId == nil
        case .purchaseUnclaimed(let e): e.bundleId == nil
        case .ownershipClaimed(let e): e.bundleId == nil
        case .ownershipTransferred(let e): e.bundleId == nil
        case .purchaseRefunded(let e): e.bundleId == nil
        case .refundReversed(let e): e.refund.bundleId == nil
        case .balanceSpent(let e): e.bundleId == nil
        case .consumptionConsentRecorded(let e): e.bundleId == nil
        case .catalogLoaded(let e): e.bundleId == nil
        case .appleNotificationReceived(let e): e.bundleId == nil
        case .pricePointsRefreshed(let e): e.bundleId == nil
        default: false
        }
    }
}

extension LedgerEvent {
    /// The app the event names; nil for events that name none, or were recorded before they did.
    public var bundleId: String? {
        switch self {
        case .orderCreated(let e): e.bundleId
        case .purchaseDelivered(let e): e.bundleId
        case .subscriptionRenewalSeen(let e): e.bundleId
        case .purchaseUnclaimed(let e): e.bundleId
        case .ownershipClaimed(let e): e.bundleId
        case .ownershipTransferred(let e): e.bundleId
        case .purchaseRefunded(let e): e.bundleId
        case .refundReversed(let e): e.refund.bundleId
        case .balanceSpent(let e): e.bundleId
        case .consumptionConsentRecorded(let e): e.bundleId
        case .catalogLoaded(let e): e.bundleId
        case .appleNotificationReceived(let e): e.bundleId
        case .pricePointsRefreshed(let e): e.bundleId
        default: nil
        }
    }

    /// The event with `app` filled in where it was recorded before events named their app
    /// (`recordedWithoutApp`): how the projection runner reads such events, once the log has
    /// named its legacy app. Every other event is returned as it is.
    public func withApp(_ app: String) -> LedgerEvent {
        guard recordedWithoutApp else { return self }
        switch self {
        case .orderCreated(var e): e.bundleId = app; return .orderCreated(e)
        case .purchaseDelivered(var e): e.bundleId = app; return .purchaseDelivered(e)
        case .subscriptionRenewalSeen(var e): e.bundleId = app; return .subscriptionRenewalSeen(e)
        case .purchaseUnclaimed(var e): e.bundleId = app; return .purchaseUnclaimed(e)
        case .ownershipClaimed(var e): e.bundleId = app; return .ownershipClaimed(e)
        case .ownershipTransferred(var e): e.bundleId = app; return .ownershipTransferred(e)
        case .purchaseRefunded(var e): e.bundleId = app; return .purchaseRefunded(e)
        case .refundReversed(var e): e.refund.bundleId = app; return .refundReversed(e)
        case .balanceSpent(var e): e.bundleId = app; return .balanceSpent(e)
        case .consumptionConsentRecorded(var e): e.bundleId = app; return .consumptionConsentRecorded(e)
        case .catalogLoaded(var e): e.bundleId = app; return .catalogLoaded(e)
        case .appleNotificationReceived(var e): e.bundleId = app; return .appleNotificationReceived(e)
        case .pricePointsRefreshed(var e): e.bundleId = app; return .pricePointsRefreshed(e)
        default: return self
        }
    }
}
