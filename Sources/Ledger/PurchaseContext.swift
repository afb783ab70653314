/// What the ledger already recorded that a purchase decision depends on, loaded by the service
/// for the transactions, orders and user one submission concerns. Deciding is then a pure
/// function of this, the submission and Apple's evidence.
public struct PurchaseContext: Sendable, Hashable {
    public var catalog: Catalog
    /// The app's bundle id (`APPLE_BUNDLE_ID`).
    public var bundleId: String
    public var transferPolicy: TransferPolicy
    /// What each Apple transaction of the evidence already became, by `transaction_id`.
    public var transactions: [String: TransactionRecord]
    /// Transactions already refunded, by `transaction_id`.
    public var refunded: Set<String>
    /// Current owners of owned products, by `original_transaction_id`.
    public var owners: [String: Ownership]
    /// The submitting user's orders not yet fulfilled, oldest first.
    public var openOrders: [OrderCreated]
    /// Orders of any user named by an `app_account_token` in the evidence (lower case), with
    /// whether they were fulfilled.
    public var ordersByToken: [String: OrderCreated]
    /// The order the client named, when it named one, whoever's it is.
    public var namedOrder: OrderCreated?
    /// The offer signatures issued to the submitting user for the offers the evidence redeems
    /// (`OfferAttribution`), in log order; loaded only when it redeems one.
    public var offerSignatures: [OfferSignatureIssued] = []
    /// For reconciliation's recovery only: by transaction id of the evidence, the user its Apple
    /// account's other purchases were delivered to, as the log holds them (found through their
    /// shared `app_transaction_id`, or Apple's transaction history of that account).
    public var accountUsers: [String: String] = [:]

    public init(
        catalog: Catalog, bundleId: String, transferPolicy: TransferPolicy = .keep, transactions: [String: TransactionRecord] = [:],
        refunded: Set<String> = [], owners: [String: Ownership] = [:], openOrders: [OrderCreated] = [],
        ordersByToken: [String: OrderCreated] = [:], namedOrder: OrderCreated? = nil
    ) {
        self.catalog = catalog
        self.bundleId = bundleId
        self.transferPolicy = transferPolicy
        self.transactions = transactions
        self.refunded = refunded
        self.owners = owners
        self.openOrders = openOrders
        self.ordersByToken = ordersByToken
        self.namedOrder = namedOrder
    }
}

/// What an Apple transaction became in the ledger: the first event of its stream.
public enum TransactionRecord: Sendable, Hashable {
    case delivered(PurchaseDelivered)
    case renewal(SubscriptionRenewalSeen)
    /// Found by reconciliation with no user to deliver it to: the first who submits it gets it.
    case unclaimed(PurchaseUnclaimed)

    /// The user it was delivered to; "" while unclaimed.
    public var userId: String {
        switch self {
        case .delivered(let d): d.userId
        case .renewal(let r): r.userId
        case .unclaimed: ""
        }
    }

    public var isUnclaimed: Bool {
        if case .unclaimed = self { return true }
        return false
    }

    /// The app it was sold in: the one its event names, else (recorded before several apps)
    /// `legacyApp`.
    public func bundleId(legacyApp: String?) -> String? {
        switch self {
        case .delivered(let d): d.bundleId ?? legacyApp
        case .renewal(let r): r.bundleId ?? legacyApp
        case .unclaimed(let u): u.bundleId ?? legacyApp
        }
    }

    public var renewal: SubscriptionRenewalSeen? {
        if case .renewal(let r) = self { return r }
        return nil
    }

    /// As the API shows a delivery (a renewal is delivered to the subscription's holder).
    public var delivery: Delivery {
        switch self {
        case .delivered(let d): Delivery(d)
        case .renewal(let r):
            Delivery(
                transactionId: r.transactionId, originalTransactionId: r.originalTransactionId, productId: r.productId,
                orderId: nil, userId: r.userId, quantity: 1, environment: r.environment)
        case .unclaimed(let u):
            Delivery(
                transactionId: u.transactionId, originalTransactionId: u.originalTransactionId, productId: u.productId,
                orderId: nil, userId: "", quantity: u.quantity, environment: u.environment)
        }
    }
}

/// Who holds an owned product now, and the version of its ownership stream (for the next
/// append's expected version).
public struct Ownership: Sendable, Hashable {
    public var userId: String
    public var streamVersion: Int64

    public init(userId: String, streamVersion: Int64) {
        self.userId = userId
        self.streamVersion = streamVersion
    }
}

/// `LEDGER_TRANSFER_POLICY`: what happens when user B submits a non-consumable or subscription
/// that user A already holds.
public enum TransferPolicy: String, Sendable, Hashable, Codable {
    /// B is refused with `owned_by_another_user`; A keeps it.
    case keep
    /// Ownership moves to B, recorded as `OwnershipTransferred`.
    case transfer
}

/// The submission being decided.
public struct Submission: Sendable, Hashable {
    public var submissionId: String
    public var userId: String
    public var orderId: String?
    /// The transaction the client says it just paid for; nil: every undelivered transaction
    /// of the receipt that matches one of the user's open orders.
    public var transactionId: String?
    /// The app the submitting token is limited to (`token:app@BUNDLE_ID`): evidence of another
    /// app is refused. Nil: any app the ledger serves.
    public var bundleId: String?

    public init(submissionId: String, userId: String, orderId: String? = nil, transactionId: String? = nil, bundleId: String? = nil) {
        self.submissionId = submissionId
        self.userId = userId
        self.orderId = orderId
        self.transactionId = transactionId
        self.bundleId = bundleId
    }
}
