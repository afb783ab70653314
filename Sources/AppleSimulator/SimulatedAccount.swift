/// A simulated Apple ID on one device: its transactions and the receipts it was handed.
public struct SimulatedAccount: Sendable, Codable, Hashable {
    public var appleId: String
    public var environment: SimulatedEnvironment
    /// The app this Apple ID's receipts are for (`bundle_id`).
    public var bundleId: String
    /// When the app was first installed, as the receipt's `original_purchase_date_ms`.
    public var createdMs: Int64
    /// Every transaction id of this Apple ID, oldest first.
    public var transactionIds: [String]
    /// Number of the receipt the device holds now (the last one issued); nil before any.
    public var latestReceiptNumber: Int?
}

/// The content of one receipt as issued to the device, fixed at issue time like Apple's.
///
/// `in_app` lists the device-made transactions present at issue time (unfinished consumables,
/// non-consumables, subscription purchases), and in a refreshed receipt the renewals too; their
/// refund or upgrade state is read live.
struct ReceiptSnapshot: Sendable, Hashable {
    var number: Int
    var appleId: String
    var environment: SimulatedEnvironment
    var issuedMs: Int64
    var inAppTransactionIds: [String]
    /// Fetched from Apple (`SKReceiptRefreshRequest`) rather than updated by a purchase on the
    /// device: only such receipts list renewals in `in_app`.
    var isRefreshed: Bool
}
