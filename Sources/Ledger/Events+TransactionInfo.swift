/// What Apple's Get Transaction Info said of a sale the ledger saw only in a receipt: its
/// storefront, price and currency, which a receipt never carries (docs/configuration.md "Money": "for a
/// sale seen only in a receipt, the ledger asks Apple's Get Transaction Info once").
/// https://developer.apple.com/documentation/appstoreserverapi/get-transaction-info

/// Apple's signed transaction for one transaction id, asked for once and verified before it
/// was recorded: the first and only event of `Streams.transactionInfo(transactionId)`, appended
/// expecting no stream. The verbatim signed transaction Apple returned is a document
/// (`documentSha256`), like every body of Apple's.
///
/// The revenue line of the sale takes its country from `storefront` when it had none, and,
/// when it was priced from the catalog (a receipt has no price), Apple's `priceMilliunits` and
/// `currency`, the currency only if it is ISO 4217 (`RevenueProjection`); the timelines show it.
public struct TransactionInfoRecorded: LedgerEventPayload {
    public static let eventType = "TransactionInfoRecorded"
    public var transactionId: String
    public var originalTransactionId: String
    /// `Production` or `Sandbox`, as Apple signed it.
    public var environment: String
    /// The storefront's country, ISO 3166-1 alpha-3 (`USA`), checked by `Storefront.countryCode`;
    /// nil when Apple's answer had none that passed.
    public var storefront: String?
    /// Apple's `price`, milliunits of `currency` for the whole transaction, tax included; nil
    /// when Apple gave none.
    public var priceMilliunits: Int64?
    /// Apple's `currency` (ISO 4217) as signed; nil when Apple gave none.
    public var currency: String?
    /// sha256 (hex) of the signed transaction (`signedTransactionInfo`) exactly as Apple
    /// returned it, kept in `documents`.
    public var documentSha256: String
    /// When the ledger recorded Apple's answer: milliseconds since 1970, UTC.
    public var recordedAtMs: Int64
    /// What asked (`get-transaction-info`).
    public var source: String

    public init(
        transactionId: String, originalTransactionId: String, environment: String, storefront: String?, priceMilliunits: Int64?,
        currency: String?, documentSha256: String, recordedAtMs: Int64, source: String
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.storefront = storefront
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.documentSha256 = documentSha256
        self.recordedAtMs = recordedAtMs
        self.source = source
    }
}
