/// The app and environment a v2 notification is for, read as Apple's libraries read them
/// (app-store-server-library's `verifyAndDecodeNotification`): from the first block the payload
/// carries, in the order `data`, `summary`, `externalPurchaseToken`, `appData`. An external
/// purchase token names no environment: sandbox when its `externalPurchaseId` starts with
/// `SANDBOX`, production otherwise. A payload with none of the blocks names no app.
/// https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload
public struct NotificationAddressee: Hashable, Sendable {
    /// The block that named the app; nil when the payload carries none.
    public enum Block: String, Hashable, Sendable, CaseIterable {
        case data, summary, externalPurchaseToken, appData
    }

    public var block: Block?
    public var bundleId: String?
    /// The app's Apple id (`appAppleId`); sandbox notifications may lack it.
    public var appAppleId: Int64?
    /// The environment as Apple spelt it, or as derived for an external purchase token.
    public var rawEnvironment: String?

    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(appleValue:)) }

    /// What one block says of the app.
    struct Named: Hashable, Sendable {
        var bundleId: String?
        var appAppleId: Int64?
        var rawEnvironment: String?
    }

    /// The first block present, in Apple's order; nothing when none is.
    init(data: Named?, summary: Named?, externalPurchaseToken: Named?, appData: Named?) {
        let blocks: [(Block, Named?)] = [(.data, data), (.summary, summary), (.externalPurchaseToken, externalPurchaseToken), (.appData, appData)]
        guard let first = blocks.first(where: { $0.1 != nil }), let named = first.1 else { return }
        block = first.0
        bundleId = named.bundleId
        appAppleId = named.appAppleId
        rawEnvironment = named.rawEnvironment
    }

    /// The environment of an external purchase token, as Apple's libraries derive it: `Sandbox`
    /// when `externalPurchaseId` starts with `SANDBOX`, else `Production`.
    public static func environment(ofExternalPurchaseId id: String?) -> String {
        id?.hasPrefix("SANDBOX") == true ? AppStoreEnvironment.sandbox.rawValue : AppStoreEnvironment.production.rawValue
    }
}
