import AppStore

/// Apple's price points as read from the App Store Connect API: what each territory's customer
/// price pays the developer. A refresh appends a new event each time, so a replay prices each
/// sale with the table in force when it was made.

/// One product's price points, read in full from App Store Connect: every page kept verbatim
/// as a document, and the points decoded from them, amounts in the territory currency's minor
/// units. Appended to `Streams.pricePoints(productId)` expecting any version.
public struct PricePointsRefreshed: LedgerEventPayload {
    public static let eventType = "PricePointsRefreshed"

    /// One territory's price point, as the App Store Connect client reads it.
    public typealias Point = PricePoint

    /// Which list: `in_app` (`/v2/inAppPurchases/{id}/pricePoints`) or `subscription`
    /// (`/v1/subscriptions/{id}/pricePoints`).
    public enum Kind: String, Sendable, Hashable, Codable {
        case inApp = "in_app"
        case subscription
    }

    public var productId: String
    /// The product's Apple id in App Store Connect (the catalog's `apple_id`).
    public var appleId: String
    /// `in_app` or `subscription`, kept as Apple's list was named.
    public var kind: String
    /// sha256 (hex) of every page's body, in order.
    public var documentSha256List: [String]
    public var points: [Point]
    /// Milliseconds since 1970, UTC.
    public var refreshedAtMs: Int64
    /// The app whose product it is (the same product id in two apps is two products, each with
    /// its own Apple id); nil when recorded before events named their app.
    public var bundleId: String?

    public init(
        productId: String, appleId: String, kind: Kind, documentSha256List: [String], points: [Point], refreshedAtMs: Int64,
        bundleId: String? = nil
    ) {
        self.productId = productId
        self.appleId = appleId
        self.kind = kind.rawValue
        self.documentSha256List = documentSha256List
        self.points = points
        self.refreshedAtMs = refreshedAtMs
        self.bundleId = bundleId
    }

    /// `kind`, typed; nil for a value this build does not know.
    public var typedKind: Kind? { Kind(rawValue: kind) }
}
