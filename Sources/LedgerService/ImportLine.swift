import AppStore
import Foundation
import Ledger
import LedgerStore
import Primitives

/// One line of `purchase-ledger import`: a user and what an earlier system kept of their
/// purchases, either Apple's verifyReceipt answer as it was stored, or a transaction record.
///
///     {"user_id": "u1", "verify_receipt_response": {"status": 0, "receipt": {...}, ...}}
///     {"user_id": "u1", "transaction": {"transaction_id": "1000000000000042", "product_id": "com.example.coins100",
///      "purchase_date_ms": 1700000000000, "original_transaction_id"?, "quantity"?, "environment"?: "Production",
///      "expires_date_ms"?, "price_milliunits"?, "currency"?, "bundle_id"?}}
///
/// `price_milliunits` means what Apple's signed `price` does: the whole transaction's, for all
/// of its quantity. A transaction record's `bundle_id` names its app, and is required when the
/// ledger serves several (a verifyReceipt answer names its own).
struct ImportLine {
    var userId: String
    var evidence: Evidence
    /// A transaction record names its transaction, so its rejections are specific
    /// (`unknown_product`, `owned_by_another_user`); a receipt delivers all it holds.
    var transactionId: String?

    private struct Raw: Decodable {
        var userId: String?
        var verifyReceiptResponse: JSONValue?
        var transaction: Record?

        enum CodingKeys: String, CodingKey {
            case userId = "user_id", verifyReceiptResponse = "verify_receipt_response", transaction
        }
    }

    private struct Record: Decodable {
        var transactionId: String
        var originalTransactionId: String?
        var productId: String
        var purchaseDateMs: Int64
        var quantity: Int64?
        var environment: String?
        var expiresDateMs: Int64?
        var priceMilliunits: Int64?
        var currency: String?
        var bundleId: String?

        enum CodingKeys: String, CodingKey {
            case transactionId = "transaction_id", originalTransactionId = "original_transaction_id", productId = "product_id"
            case purchaseDateMs = "purchase_date_ms", quantity, environment, expiresDateMs = "expires_date_ms"
            case priceMilliunits = "price_milliunits", currency, bundleId = "bundle_id"
        }
    }

    /// Shared, as `LedgerJSON`'s are, so a line does not pay for making its own coder
    /// (docs/benchmarks.md, 'Why the code is shaped so').
    private static let plainDecoder = JSONDecoder()
    private static let plainEncoder = JSONEncoder()

    /// Parses and checks a line; the error says what is wrong, for the line-numbered report.
    static func parse(_ bytes: [UInt8], apps: LedgerApps) throws(LedgerServiceError) -> ImportLine {
        let raw: Raw
        do {
            // A plain decoder: a key strategy would also rename the keys inside Apple's body.
            raw = try plainDecoder.decode(Raw.self, from: Data(bytes))
        } catch {
            throw LedgerServiceError(.invalidRequest, LedgerJSON.describe(error))
        }
        guard let user = raw.userId, (1...200).contains(user.count) else {
            throw LedgerServiceError(.invalidRequest, "user_id must be a string of 1 to 200 characters")
        }
        switch (raw.verifyReceiptResponse, raw.transaction) {
        case (.some(let body), nil):
            guard case .object = body, let data = try? plainEncoder.encode(body), let response = try? VerifyReceiptResponse(jsonBytes: data) else {
                throw LedgerServiceError(.invalidRequest, "verify_receipt_response is not a verifyReceipt answer")
            }
            guard response.status == .valid || response.status == .subscriptionExpired else {
                throw LedgerServiceError(.invalidRequest, "verify_receipt_response has status \(response.status.rawValue): Apple did not vouch for it")
            }
            return ImportLine(userId: user, evidence: Evidence(response: response, environmentFallback: "Production"), transactionId: nil)
        case (nil, .some(let record)):
            // An app the ledger does not serve is refused as a receipt of it would be (the decider's
            // bundle rule), naming the line.
            guard let bundleId = record.bundleId ?? (apps.isSeveral ? nil : apps.first.bundleId) else {
                throw LedgerServiceError(
                    .invalidRequest, "transaction.bundle_id is required: this ledger serves several apps (\(apps.bundleIds.joined(separator: ", ")))")
            }
            return ImportLine(userId: user, evidence: try evidence(record, bundleId: bundleId), transactionId: record.transactionId)
        default:
            throw LedgerServiceError(.invalidRequest, "a line holds either verify_receipt_response or transaction")
        }
    }

    private static func evidence(_ record: Record, bundleId: String) throws(LedgerServiceError) -> Evidence {
        let environment = record.environment ?? "Production"
        guard environment == "Production" || environment == "Sandbox" else {
            throw LedgerServiceError(.invalidRequest, "transaction.environment is Production or Sandbox, not \(environment)")
        }
        guard !record.transactionId.isEmpty, !record.productId.isEmpty else {
            throw LedgerServiceError(.invalidRequest, "transaction.transaction_id and product_id must not be empty")
        }
        let quantity = record.quantity ?? 1
        guard quantity > 0 else { throw LedgerServiceError(.invalidRequest, "transaction.quantity must be positive") }
        guard (record.priceMilliunits == nil) == (record.currency == nil) else {
            throw LedgerServiceError(.invalidRequest, "transaction.price_milliunits and currency go together")
        }
        if let currency = record.currency, !ISO4217.isCode(currency) {
            throw LedgerServiceError(.invalidRequest, "transaction.currency must be an ISO 4217 code")
        }
        let entry = EvidenceEntry(
            transactionId: record.transactionId, originalTransactionId: record.originalTransactionId ?? record.transactionId,
            productId: record.productId, quantity: quantity, purchaseDateMs: record.purchaseDateMs, expiresDateMs: record.expiresDateMs,
            priceMilliunits: record.priceMilliunits, currency: record.currency)
        return Evidence(bundleId: bundleId, environment: environment, entries: [entry])
    }
}
