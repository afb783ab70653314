/// A catalog file was loaded: prices and grants in force from this event on.
public struct CatalogLoaded: LedgerEventPayload {
    public static let eventType = "CatalogLoaded"
    public var products: [Product]
    /// sha256 (hex) of the file as loaded.
    public var fileSha256: String?

    /// The app whose products were loaded; absent in events recorded before several apps (docs/several-apps.md).
    public var bundleId: String?

    public init(products: [Product], fileSha256: String? = nil, bundleId: String? = nil) {
        self.bundleId = bundleId
        self.products = products
        self.fileSha256 = fileSha256
    }
}

/// The app's backend created an order before the client paid (`POST /v1/orders`).
public struct OrderCreated: LedgerEventPayload {
    public static let eventType = "OrderCreated"
    public var orderId: String
    public var userId: String
    public var productId: String
    public var quantity: Int64
    /// The UUID (lower case) the app passes to StoreKit; Apple echoes it in the transaction.
    public var appAccountToken: String
    /// Milliseconds since 1970, UTC.
    public var createdAtMs: Int64

    /// The app the order is for (`bundle_id`); absent in events recorded before several apps, which belong to the log's legacy app (docs/several-apps.md).
    public var bundleId: String?

    public init(orderId: String, userId: String, productId: String, quantity: Int64, appAccountToken: String, createdAtMs: Int64, bundleId: String? = nil) {
        self.bundleId = bundleId
        self.orderId = orderId
        self.userId = userId
        self.productId = productId
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.createdAtMs = createdAtMs
    }
}

/// An order was paid for by an Apple transaction; an order is fulfilled once (its stream's
/// second event, appended expecting version 1).
public struct OrderFulfilled: LedgerEventPayload {
    public static let eventType = "OrderFulfilled"
    public var orderId: String
    public var transactionId: String

    public init(orderId: String, transactionId: String) {
        self.orderId = orderId
        self.transactionId = transactionId
    }
}
