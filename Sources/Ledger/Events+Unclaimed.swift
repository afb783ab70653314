import AppStore

/// A purchase Apple knows and the ledger could not place: found by reconciliation in Apple's
/// history (its order, receipt and delivery lost by a database restore, or never submitted), with
/// no open order of its app account token and no owner of its original transaction to name its
/// user. Appended as the first event of `transaction-<transaction_id>`; the first user who submits
/// it is delivered it (a `PurchaseDelivered` at version 2), so it is delivered once, ever.
public struct PurchaseUnclaimed: LedgerEventPayload {
    public static let eventType = "PurchaseUnclaimed"
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var quantity: Int64
    /// `Production` or `Sandbox`, as Apple said.
    public var environment: String
    /// Milliseconds since 1970, UTC.
    public var purchaseDateMs: Int64?
    public var priceMilliunits: Int64?
    public var currency: String?
    public var appAccountToken: String?
    /// What found it (`notification:UUID` of the history reconciliation read).
    public var source: String

    /// The app Apple's evidence named; absent in events recorded before several apps (docs/several-apps.md).
    public var bundleId: String?

    public init(
        transactionId: String, originalTransactionId: String, productId: String, kind: ProductKind, quantity: Int64,
        environment: String, purchaseDateMs: Int64?, priceMilliunits: Int64?, currency: String?, appAccountToken: String?, source: String, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.kind = kind
        self.quantity = quantity
        self.environment = environment
        self.purchaseDateMs = purchaseDateMs
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.appAccountToken = appAccountToken
        self.source = source
    }
}
