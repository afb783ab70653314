/// How a purchase reached the ledger.
public enum SubmissionKind: String, Sendable, Hashable, Codable {
    /// A base64 app receipt (`POST /v1/receipts`), verified by Apple's verifyReceipt.
    case receipt
    /// A StoreKit 2 `jwsRepresentation` (`POST /v1/transactions`), verified locally.
    case signedTransaction = "signed_transaction"
    /// A line of history imported from an earlier system (`purchase-ledger import`).
    case imported = "import"
    /// A restore through Apple (`POST /v1/users/{user_id}/restore`): the proof is the signed
    /// transaction or the transaction id the app sent; Apple's transaction history is the evidence.
    case restore
}

/// A client handed in proof of payment. Recorded before Apple is asked, so an accepted receipt
/// is never lost; the receipt itself is a document named by `documentSha256`.
public struct ReceiptSubmitted: LedgerEventPayload {
    public static let eventType = "ReceiptSubmitted"
    public var submissionId: String
    public var userId: String
    public var orderId: String?
    public var transactionId: String?
    public var kind: SubmissionKind
    /// sha256 (hex) of the receipt data or JWS as sent.
    public var documentSha256: String
    /// Milliseconds since 1970, UTC.
    public var submittedAtMs: Int64
    /// The app the submitting token was limited to: the retry worker decides it for that app
    /// alone, as the request would have. Nil: any app served (and every event before several apps).
    public var bundleId: String?

    public init(
        submissionId: String, userId: String, orderId: String?, transactionId: String?, kind: SubmissionKind, documentSha256: String,
        submittedAtMs: Int64, bundleId: String? = nil
    ) {
        self.bundleId = bundleId
        self.submissionId = submissionId
        self.userId = userId
        self.orderId = orderId
        self.transactionId = transactionId
        self.kind = kind
        self.documentSha256 = documentSha256
        self.submittedAtMs = submittedAtMs
    }
}

/// One request to Apple's verifyReceipt and what came back; the body is a document.
public struct AppleResponded: LedgerEventPayload {
    public static let eventType = "AppleResponded"
    public var submissionId: String
    /// `production` or `sandbox`.
    public var endpoint: String
    public var url: String
    public var httpStatus: Int?
    /// The body's `status`, when it could be read.
    public var status: Int?
    public var latencyMs: Int64
    public var startedAtMs: Int64
    /// sha256 (hex) of the body exactly as received; nil when nothing was received.
    public var documentSha256: String?
    /// Why no usable body arrived (`timeout`, `connection_failed`, ...).
    public var failure: String?

    public init(submissionId: String, endpoint: String, url: String, httpStatus: Int?, status: Int?, latencyMs: Int64, startedAtMs: Int64, documentSha256: String?, failure: String?) {
        self.submissionId = submissionId
        self.endpoint = endpoint
        self.url = url
        self.httpStatus = httpStatus
        self.status = status
        self.latencyMs = latencyMs
        self.startedAtMs = startedAtMs
        self.documentSha256 = documentSha256
        self.failure = failure
    }
}

/// Apple could not answer; the receipt stays pending and the worker asks again after the delay.
public struct VerificationPending: LedgerEventPayload {
    public static let eventType = "VerificationPending"
    public var submissionId: String
    public var reason: String
    /// 1 for the first verification, then one more per retry.
    public var attempt: Int
    public var retryAfterSeconds: Int
    public var nextAttemptAtMs: Int64

    public init(submissionId: String, reason: String, attempt: Int, retryAfterSeconds: Int, nextAttemptAtMs: Int64) {
        self.submissionId = submissionId
        self.reason = reason
        self.attempt = attempt
        self.retryAfterSeconds = retryAfterSeconds
        self.nextAttemptAtMs = nextAttemptAtMs
    }
}

/// The submission delivers nothing, for the reason `code` (docs/http-api.md's 422 codes).
public struct DeliveryRejected: LedgerEventPayload {
    public static let eventType = "DeliveryRejected"
    public var submissionId: String
    public var userId: String
    public var code: RejectionCode
    public var message: String

    public init(submissionId: String, userId: String, code: RejectionCode, message: String) {
        self.submissionId = submissionId
        self.userId = userId
        self.code = code
        self.message = message
    }
}

/// The submission was answered with deliveries: made now, or made before (`already_delivered`).
public struct SubmissionResolved: LedgerEventPayload {
    public static let eventType = "SubmissionResolved"
    public var submissionId: String
    public var outcome: String
    public var transactionIds: [String]

    public init(submissionId: String, outcome: String, transactionIds: [String]) {
        self.submissionId = submissionId
        self.outcome = outcome
        self.transactionIds = transactionIds
    }
}

/// Why a submission delivered nothing (docs/http-api.md `POST /v1/receipts`, 422).
public enum RejectionCode: String, Sendable, Hashable, Codable, CaseIterable {
    case receiptInvalid = "receipt_invalid"
    case signatureInvalid = "signature_invalid"
    case bundleIdMismatch = "bundle_id_mismatch"
    case transactionNotInReceipt = "transaction_not_in_receipt"
    case unknownProduct = "unknown_product"
    case ownedByAnotherUser = "owned_by_another_user"
    /// Apple's verified answer shows the transaction refunded or revoked: nothing to deliver.
    case transactionRefunded = "transaction_refunded"
    /// The person it was submitted for was erased before it was decided: their receipt opens no
    /// more, and nothing is delivered to no one (docs/erasure.md).
    case userErased = "user_erased"
}

/// The original transactions one receipt of this app listed together: they belong to one Apple
/// account (a receipt is one Apple ID's), which the ownership projection unions across every
/// receipt seen. Recorded with the decision when the receipt lists more than one.
public struct AppleAccountObserved: LedgerEventPayload {
    public static let eventType = "AppleAccountObserved"
    public var submissionId: String
    public var environment: String
    /// Sorted, without duplicates.
    public var originalTransactionIds: [String]
    /// The `appTransactionId` of the receipt's entries, when Apple gave one.
    public var appTransactionId: String?

    public init(submissionId: String, environment: String, originalTransactionIds: [String], appTransactionId: String?) {
        self.submissionId = submissionId
        self.environment = environment
        self.originalTransactionIds = originalTransactionIds
        self.appTransactionId = appTransactionId
    }
}
