/// What to record and answer for one submission or notification: the appends (each with the
/// version its stream must be at, so a concurrent decision that got there first makes this one
/// fail and be decided again) and the answer to the client.
public struct Decision: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        /// Delivered now.
        case delivered([Delivery])
        /// Nothing new: these were delivered before.
        case alreadyDelivered([Delivery])
        case rejected(RejectionCode, String)
    }

    public var outcome: Outcome
    /// Appends to streams other than the submission's own.
    public var appends: [LedgerAppend]
    /// The transactions the receipt listed together, recorded in the submission's stream
    /// before its closing event (nil for another app's receipt, or one listing a single purchase).
    public var appleAccount: AppleAccountObserved?

    public init(outcome: Outcome, appends: [LedgerAppend], appleAccount: AppleAccountObserved? = nil) {
        self.outcome = outcome
        self.appends = appends
        self.appleAccount = appleAccount
    }

    /// Every append that records this decision: the submission's own stream first (its
    /// `leading` events, then the closing ones, appended at `expectation`), then the other
    /// streams. The one way a decision becomes appends, for live submissions, the retry worker
    /// and imports alike.
    public func appends(for submission: Submission, expecting expectation: LedgerAppend.Expectation, after leading: [LedgerEvent]) -> [LedgerAppend] {
        [LedgerAppend(stream: Streams.submission(submission.submissionId), expectation: expectation, events: leading + closingEvents(for: submission))]
            + appends
    }

    /// The events that close the submission's stream.
    public func closingEvents(for submission: Submission) -> [LedgerEvent] {
        (appleAccount.map { [LedgerEvent.appleAccountObserved($0)] } ?? []) + [closingEvent(for: submission)]
    }

    /// The event that closes the submission's stream.
    public func closingEvent(for submission: Submission) -> LedgerEvent {
        switch outcome {
        case .delivered(let deliveries):
            .submissionResolved(SubmissionResolved(submissionId: submission.submissionId, outcome: "delivered", transactionIds: deliveries.map(\.transactionId)))
        case .alreadyDelivered(let deliveries):
            .submissionResolved(SubmissionResolved(submissionId: submission.submissionId, outcome: "already_delivered", transactionIds: deliveries.map(\.transactionId)))
        case .rejected(let code, let message):
            .deliveryRejected(DeliveryRejected(submissionId: submission.submissionId, userId: submission.userId, code: code, message: message))
        }
    }
}

/// Events for one stream with the version it must be at.
public struct LedgerAppend: Sendable, Hashable {
    public enum Expectation: Sendable, Hashable {
        case noStream
        case exactly(Int64)
        case any
    }

    public var stream: String
    public var expectation: Expectation
    public var events: [LedgerEvent]

    public init(stream: String, expectation: Expectation, events: [LedgerEvent]) {
        self.stream = stream
        self.expectation = expectation
        self.events = events
    }
}

/// One delivered transaction as the API shows it (docs/http-api.md `deliveries`).
public struct Delivery: Sendable, Hashable, Codable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var orderId: String?
    public var userId: String
    public var quantity: Int64
    public var environment: String

    public init(transactionId: String, originalTransactionId: String, productId: String, orderId: String?, userId: String, quantity: Int64, environment: String) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.orderId = orderId
        self.userId = userId
        self.quantity = quantity
        self.environment = environment
    }

    public init(_ delivered: PurchaseDelivered) {
        self.init(
            transactionId: delivered.transactionId, originalTransactionId: delivered.originalTransactionId,
            productId: delivered.productId, orderId: delivered.orderId, userId: delivered.userId,
            quantity: delivered.quantity, environment: delivered.environment)
    }
}
