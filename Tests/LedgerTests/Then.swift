@testable import Ledger

/// Reading a decision's outcome and appends in assertions.
extension Decision {
    /// The deliveries made now; empty unless the outcome is `.delivered`.
    var deliveries: [Delivery] {
        if case .delivered(let deliveries) = outcome { return deliveries }
        return []
    }

    /// The earlier deliveries answered again; empty unless the outcome is `.alreadyDelivered`.
    var alreadyDelivered: [Delivery] {
        if case .alreadyDelivered(let deliveries) = outcome { return deliveries }
        return []
    }

    /// The rejection code; nil unless the outcome is `.rejected`.
    var rejection: RejectionCode? {
        if case .rejected(let code, _) = outcome { return code }
        return nil
    }

    /// The streams appended to, in order.
    var streams: [String] { appends.map(\.stream) }

    func appended(to stream: String) -> LedgerAppend? { appends.first { $0.stream == stream } }

    /// Every event appended, in order.
    var events: [LedgerEvent] { appends.flatMap(\.events) }
}

extension LedgerAppend {
    /// The append's event when it holds exactly one.
    var event: LedgerEvent? { events.count == 1 ? events[0] : nil }
}

extension [LedgerAppend] {
    func appended(to stream: String) -> LedgerAppend? { first { $0.stream == stream } }
}

/// Typed access to one kind of event (nil for the others).
extension LedgerEvent {
    var asDelivered: PurchaseDelivered? {
        if case .purchaseDelivered(let e) = self { return e }
        return nil
    }
    var asRenewal: SubscriptionRenewalSeen? {
        if case .subscriptionRenewalSeen(let e) = self { return e }
        return nil
    }
    var asObserved: SubscriptionObserved? {
        if case .subscriptionObserved(let e) = self { return e }
        return nil
    }
    var asRefund: PurchaseRefunded? {
        if case .purchaseRefunded(let e) = self { return e }
        return nil
    }
    var asClaim: OwnershipClaimed? {
        if case .ownershipClaimed(let e) = self { return e }
        return nil
    }
    var asTransfer: OwnershipTransferred? {
        if case .ownershipTransferred(let e) = self { return e }
        return nil
    }
}

extension TransactionRecord {
    var transactionId: String {
        switch self {
        case .delivered(let d): d.transactionId
        case .renewal(let r): r.transactionId
        case .unclaimed(let u): u.transactionId
        }
    }
}
