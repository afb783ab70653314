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
    /// The App Store storefront the Apple ID buys in (ISO 3166-1 alpha-3), signed into its
    /// transactions as `storefront` and pricing them (`PriceTerritory.equivalentPrice`); `USA`
    /// unless a purchase names another.
    public var storefront: String = SimulatedStorefront.defaultCountry
}

/// The storefronts the simulator signs: a country code (ISO 3166-1 alpha-3) and, for the
/// countries it knows, Apple's numeric storefront id.
/// https://developer.apple.com/documentation/appstoreserverapi/storefront
public enum SimulatedStorefront {
    public static let defaultCountry = "USA"

    /// Apple's `storefrontId` of a few storefronts; nil for a country not listed here.
    static let ids: [String: String] = [
        "USA": "143441", "FRA": "143442", "DEU": "143443", "GBR": "143444", "CAN": "143455", "AUS": "143460",
        "JPN": "143462", "BRA": "143503",
    ]

    /// True for three upper-case ASCII letters, as Apple writes storefronts.
    static func isCountryCode(_ text: String) -> Bool {
        text.utf8.count == 3 && text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }
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
