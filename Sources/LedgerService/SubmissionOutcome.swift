import Ledger

/// The answer to a receipt or signed-transaction submission (docs/http-api.md `POST /v1/receipts`).
public enum SubmissionOutcome: Sendable, Hashable {
    case delivered([Delivery])
    case alreadyDelivered([Delivery])
    /// Apple could not answer; the ledger keeps the receipt and retries by itself.
    case pending(retryAfterSeconds: Int)
    case rejected(RejectionCode, String)

    init(_ outcome: Decision.Outcome) {
        switch outcome {
        case .delivered(let d): self = .delivered(d)
        case .alreadyDelivered(let d): self = .alreadyDelivered(d)
        case .rejected(let code, let message): self = .rejected(code, message)
        }
    }

    /// `delivered`, `already_delivered`, `pending` or `rejected`: the API's `outcome`.
    public var label: String {
        switch self {
        case .delivered: "delivered"
        case .alreadyDelivered: "already_delivered"
        case .pending: "pending"
        case .rejected: "rejected"
        }
    }
}
