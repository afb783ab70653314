import AppStore
import Foundation
import Primitives

/// What the webhook messages of later events depend on, folded from earlier ones: each user's
/// running balance of each unit, and per subscription what its messages last told (status,
/// auto-renew) with the transactions and renewal state that decide them. Kept per key, so a
/// page of events loads and stores only the keys it touches.
public enum WebhookState: Sendable, Hashable {
    case balance(Int64)
    case subscription(WebhookSubscription)

    /// The key of a user's balance of `unit` in the app `bundleId` (the unit's length first, as
    /// `Streams.wallet`, so no pair spells another's key; the app before them, a space apart,
    /// which neither a bundle id nor a user id holds). Nil: an event naming no app (the runner
    /// fills in the log's legacy app; only a log that names none yet keeps it nil).
    public static func balanceKey(bundleId: String?, userId: String, unit: String) -> String {
        guard let bundleId else { return "b:\(unit.utf8.count):\(unit):\(userId)" }
        return "b \(bundleId) \(unit.utf8.count):\(unit):\(userId)"
    }
    public static func subscriptionKey(_ originalTransactionId: String) -> String { "s:" + originalTransactionId }
}

/// One subscription as its messages see it.
public struct WebhookSubscription: Codable, Sendable, Hashable {
    public var productId: String?
    /// Its owner: whose messages its messages are.
    public var userId: String?
    /// Every transaction Apple showed of it, merged by transaction id (as the subscriptions
    /// projection merges them), and its newest renewal state.
    public var entries: [SubscriptionEntry] = []
    public var renewal: RenewalObservation?
    /// What its messages last said: the status and auto-renew they were made at.
    public var toldStatus: SubscriptionSummary.Status?
    public var toldAutoRenew: Bool?
    /// Apple's RENEWAL_EXTENDED notification was recorded: the observation that follows it (its
    /// effects come after it in one append) is told as an extension if it moves the end.
    public var appleExtending: Bool?
    /// The app it was sold in, from the first event that names one: every message of it says so.
    public var bundleId: String?

    public init() {}
}

/// The mapping from ledger events to webhook messages: pure, a fold over the log. `states`
/// holds the state of every key `keys(for:)` names for the event (absent: never stored), and
/// comes back changed.
public enum WebhookFold {
    /// The state keys `messages(for:at:states:)` reads and writes for `event`.
    public static func keys(for event: LedgerEvent) -> [String] {
        switch event {
        case .purchaseDelivered(let d):
            let balances = d.grants.keys.map { WebhookState.balanceKey(bundleId: d.bundleId, userId: d.userId, unit: $0) }
            return d.kind == .autoRenewable ? balances + [WebhookState.subscriptionKey(d.originalTransactionId)] : balances
        case .purchaseRefunded(let r):
            let balances = r.kind == .consumable
                ? r.unitsTakenBack.keys.map { WebhookState.balanceKey(bundleId: r.bundleId, userId: r.userId, unit: $0) } : []
            return r.kind == .autoRenewable ? [WebhookState.subscriptionKey(r.originalTransactionId)] : balances
        case .refundReversed(let v):
            let r = v.refund
            let balances = r.kind == .consumable
                ? r.unitsTakenBack.keys.map { WebhookState.balanceKey(bundleId: r.bundleId, userId: r.userId, unit: $0) } : []
            return r.kind == .autoRenewable ? [WebhookState.subscriptionKey(r.originalTransactionId)] : balances
        case .balanceSpent(let s):
            return [WebhookState.balanceKey(bundleId: s.bundleId, userId: s.userId, unit: s.unit)]
        case .subscriptionRenewalSeen(let r):
            return [WebhookState.subscriptionKey(r.originalTransactionId)]
        case .subscriptionObserved(let o):
            return [WebhookState.subscriptionKey(o.originalTransactionId)]
        case .ownershipClaimed(let c) where c.kind == .autoRenewable:
            return [WebhookState.subscriptionKey(c.originalTransactionId)]
        case .ownershipTransferred(let t) where t.kind == .autoRenewable:
            return [WebhookState.subscriptionKey(t.originalTransactionId)]
        case .subscriptionRenewalExtended(let e) where e.extended:
            return [WebhookState.subscriptionKey(e.originalTransactionId)]
        case .appleNotificationReceived(let n) where n.notificationType == "RENEWAL_EXTENDED":
            return n.originalTransactionId.map { [WebhookState.subscriptionKey($0)] } ?? []
        default:
            return []
        }
    }

    /// The messages of `event`, in docs/webhooks.md's order of types, and the states it leaves.
    public static func messages(for event: LedgerEvent, at place: EventPlace, states: inout [String: WebhookState]) -> [WebhookEvent] {
        // Every message names the app its event names; a subscription's, the app it was sold in.
        var out = Messages(place: place, app: event.bundleId)
        switch event {
        case .purchaseDelivered(let d):
            out.add(.purchaseDelivered, user: d.userId, [
                "transaction_id": .string(d.transactionId), "original_transaction_id": .string(d.originalTransactionId),
                "product_id": .string(d.productId), "quantity": .integer(d.quantity), "environment": .string(d.environment),
                "order_id": d.orderId.map(JSONValue.string) ?? .null,
            ])
            if d.kind == .autoRenewable {
                let before = expiry(of: d.originalTransactionId, states)
                let renewed = observe(event, subscription: d.originalTransactionId, product: d.productId, owner: d.userId, at: place, states: &states)
                // A later period the client submitted without an order is a renewal like one Apple showed.
                if d.match == .renewal, renewed.extends(before) {
                    out.add(.subscriptionRenewed, user: renewed.userId, renewed.fields(d.originalTransactionId))
                }
            }
            changeBalances(d.grants, sign: 1, user: d.userId, out: &out, states: &states)
        case .subscriptionRenewalSeen(let r):
            // An earlier period seen late (the decider records every period of a receipt) moves
            // no expiry and renews nothing.
            let before = expiry(of: r.originalTransactionId, states)
            let renewed = observe(event, subscription: r.originalTransactionId, product: r.productId, owner: r.userId, at: place, states: &states)
            if renewed.extends(before) { out.add(.subscriptionRenewed, user: renewed.userId, renewed.fields(r.originalTransactionId)) }
        case .subscriptionObserved(let o):
            let key = WebhookState.subscriptionKey(o.originalTransactionId)
            let before = subscription(key, states)
            let end = expiry(of: o.originalTransactionId, states)
            let after = observe(event, subscription: o.originalTransactionId, product: nil, owner: nil, at: place, states: &states)
            out.app = after.told.bundleId
            if before.appleExtending == true {
                // Apple extended it (a mass extension, or one asked elsewhere): told once, when the
                // end moves; an extension the ledger asked for moved it already, so nothing more.
                after.told.appleExtending = nil
                if after.extends(end), let moved = after.summary?.expiresAtMs {
                    var fields = after.fields(o.originalTransactionId)
                    fields["days"] = end.map { .integer((moved - $0) / 86_400_000) } ?? .null
                    fields["reason"] = .null
                    out.add(.subscriptionExtended, user: after.userId, fields)
                }
            }
            tellChanges(of: o.originalTransactionId, from: before, to: after, out: &out)
            states[key] = .subscription(after.told)
        case .appleNotificationReceived(let n) where n.notificationType == "RENEWAL_EXTENDED":
            if let original = n.originalTransactionId {
                let key = WebhookState.subscriptionKey(original)
                var sub = subscription(key, states)
                sub.appleExtending = true
                states[key] = .subscription(sub)
            }
        case .purchaseRefunded(let r):
            out.add(.purchaseRefunded, user: r.userId, [
                "transaction_id": .string(r.transactionId), "original_transaction_id": .string(r.originalTransactionId),
                "product_id": .string(r.productId), "refunded_fraction_milli": .integer(r.fractionMilli),
            ])
            if r.kind == .autoRenewable { _ = observe(event, subscription: r.originalTransactionId, product: r.productId, owner: nil, at: place, states: &states) }
            if r.kind == .consumable { changeBalances(r.unitsTakenBack, sign: -1, user: r.userId, out: &out, states: &states) }
        case .refundReversed(let v):
            let r = v.refund
            out.add(.refundReversed, user: r.userId, ["transaction_id": .string(r.transactionId)])
            if r.kind == .autoRenewable { _ = observe(event, subscription: r.originalTransactionId, product: r.productId, owner: nil, at: place, states: &states) }
            if r.kind == .consumable { changeBalances(r.unitsTakenBack, sign: 1, user: r.userId, out: &out, states: &states) }
        case .ownershipClaimed(let c) where c.kind == .autoRenewable:
            _ = observe(event, subscription: c.originalTransactionId, product: c.productId, owner: c.userId, at: place, states: &states)
        case .ownershipTransferred(let t):
            if t.kind == .autoRenewable {
                _ = observe(event, subscription: t.originalTransactionId, product: t.productId, owner: t.toUserId, at: place, states: &states)
            }
            out.add(.ownershipTransferred, user: t.toUserId, [
                "original_transaction_id": .string(t.originalTransactionId), "from_user_id": .string(t.fromUserId),
            ])
        case .balanceSpent(let s):
            changeBalances([s.unit: s.amount], sign: -1, user: s.userId, out: &out, states: &states)
        case .subscriptionRenewalExtended(let e) where e.extended:
            // Told once: Apple's RENEWAL_EXTENDED may be recorded before Apple's answer to the
            // ledger's request; whichever moved the end first told it.
            let before = expiry(of: e.originalTransactionId, states)
            let extended = observe(event, subscription: e.originalTransactionId, product: e.productId, owner: nil, at: place, states: &states)
            out.app = extended.told.bundleId
            guard extended.extends(before) else { break }
            var fields = extended.fields(e.originalTransactionId)
            fields["days"] = .integer(e.days)
            fields["reason"] = .string(e.reason.rawValue)
            out.add(.subscriptionExtended, user: extended.userId, fields)
        case .userErased(let e):
            out.add(.userErased, user: nil, ["subject": .string(e.subject)])
        default:
            break
        }
        return out.events
    }

    /// The messages of one ledger event, numbered as they are added.
    struct Messages {
        let place: EventPlace
        /// The app its messages name (`bundle_id`); nil: none named.
        var app: String?
        var events: [WebhookEvent] = []

        mutating func add(_ type: WebhookEventType, user: String?, _ fields: [String: JSONValue]) {
            var fields = fields
            if let app { fields["bundle_id"] = .string(app) }
            events.append(WebhookEvent(
                position: place.position, hash: place.hash, sequence: Int32(events.count), type: type, userId: user,
                recordedAtMs: place.recordedAtMs, fields: fields))
        }
    }

    private static func changeBalances(_ units: [String: Int64], sign: Int64, user: String, out: inout Messages, states: inout [String: WebhookState]) {
        for (unit, amount) in units.sorted(by: { $0.key < $1.key }) where amount != 0 {
            let key = WebhookState.balanceKey(bundleId: out.app, userId: user, unit: unit)
            var balance: Int64 = 0
            if case .balance(let known) = states[key] { balance = known }
            balance += sign * amount
            states[key] = .balance(balance)
            out.add(.balanceChanged, user: user, ["unit": .string(unit), "balance": .integer(balance), "change": .integer(sign * amount)])
        }
    }

    /// A subscription's end of access as its messages know it (nil: not known yet).
    private static func expiry(of original: String, _ states: [String: WebhookState]) -> Int64? {
        let known = subscription(WebhookState.subscriptionKey(original), states)
        return SubscriptionSummary(entries: known.entries, renewal: known.renewal, nowMs: 0)?.expiresAtMs
    }

    private static func subscription(_ key: String, _ states: [String: WebhookState]) -> WebhookSubscription {
        if case .subscription(let known) = states[key] { return known }
        return WebhookSubscription()
    }

    /// A subscription after `event`: its transactions and renewal state merged by the
    /// subscriptions projection's own rules, its product and owner updated; stored with what
    /// its messages told unchanged (a caller that tells stores it again).
    private static func observe(
        _ event: LedgerEvent, subscription original: String, product: String?, owner: String?, at place: EventPlace,
        states: inout [String: WebhookState]
    ) -> Observed {
        let key = WebhookState.subscriptionKey(original)
        var sub = subscription(key, states)
        // Apple's RENEWAL_EXTENDED speaks for the observation right after it, no other.
        if case .subscriptionObserved = event {} else { sub.appleExtending = nil }
        for change in SubscriptionsProjection().changes(for: event) {
            switch change {
            case .mergeSubscriptionEntry(_, _, let entry):
                if let index = sub.entries.firstIndex(where: { $0.transactionId == entry.transactionId }) {
                    sub.entries[index] = sub.entries[index].merged(with: entry)
                } else {
                    sub.entries.append(entry)
                }
            case .observeRenewal(_, let renewal):
                if sub.renewal.map({ renewal.observedAtMs >= $0.observedAtMs }) ?? true { sub.renewal = renewal }
            case .clearSubscriptionCancellation(_, let transaction):
                if let index = sub.entries.firstIndex(where: { $0.transactionId == transaction }) { sub.entries[index].cancellationDateMs = nil }
            default:
                break
            }
        }
        if let product { sub.productId = product }
        if let owner { sub.userId = owner }
        if sub.bundleId == nil { sub.bundleId = event.bundleId }
        // The status is the one at the observation: the ledger's time when it read Apple's
        // renewal state (the log's recorded time for events that carry none). The same instant
        // on every replay, and the ledger's clock, not the database's.
        let nowMs: Int64
        if case .subscriptionObserved(let o) = event, let observed = o.renewal?.observedAtMs { nowMs = observed } else { nowMs = place.recordedAtMs }
        let summary = SubscriptionSummary(entries: sub.entries, renewal: sub.renewal, nowMs: nowMs)
        var told = sub
        if event.isPurchaseOrRenewal, let summary {
            // A purchase or renewal is told as itself; what it made of the status is known from here.
            told.toldStatus = summary.status
            told.toldAutoRenew = summary.autoRenew ?? sub.toldAutoRenew
        }
        states[key] = .subscription(told)
        return Observed(told: told, summary: summary)
    }

    /// The status and auto-renew changes a subscription's observation shows, told once each.
    private static func tellChanges(of original: String, from before: WebhookSubscription, to after: Observed, out: inout Messages) {
        guard let summary = after.summary else { return }
        var told = after.told
        let fields = after.fields(original)
        if summary.status != before.toldStatus {
            switch summary.status {
            case .expired: out.add(.subscriptionExpired, user: told.userId, fields)
            case .inBillingRetry: out.add(.subscriptionInBillingRetry, user: told.userId, fields)
            case .inGracePeriod: out.add(.subscriptionInGracePeriod, user: told.userId, fields)
            case .active, .revoked: break
            }
            told.toldStatus = summary.status
        }
        if let autoRenew = summary.autoRenew {
            if let known = before.toldAutoRenew, known != autoRenew {
                var changed = fields
                changed["auto_renew"] = .bool(autoRenew)
                out.add(.subscriptionAutoRenewChanged, user: told.userId, changed)
            }
            told.toldAutoRenew = autoRenew
        }
        after.told = told
    }

    /// A subscription as one event left it, and its summary at that event's time.
    final class Observed {
        var told: WebhookSubscription
        let summary: SubscriptionSummary?

        init(told: WebhookSubscription, summary: SubscriptionSummary?) {
            self.told = told
            self.summary = summary
        }

        var userId: String? { told.userId }

        /// Whether this event moved the end of access past `before`.
        func extends(_ before: Int64?) -> Bool {
            guard let after = summary?.expiresAtMs else { return false }
            return before.map { after > $0 } ?? true
        }

        /// `original_transaction_id`, `product_id`, `expires_at`: every subscription message's.
        func fields(_ original: String) -> [String: JSONValue] {
            [
                "original_transaction_id": .string(original),
                "product_id": (summary?.productId ?? told.productId).map(JSONValue.string) ?? .null,
                "expires_at": summary?.expiresAtMs.map { .string(RevenueDay.iso8601($0)) } ?? .null,
            ]
        }
    }
}

extension LedgerEvent {
    fileprivate var isPurchaseOrRenewal: Bool {
        switch self {
        case .purchaseDelivered, .subscriptionRenewalSeen: true
        default: false
        }
    }
}

extension WebhookState: Codable {
    private enum CodingKeys: String, CodingKey { case balance, subscription }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let balance = try container.decodeIfPresent(Int64.self, forKey: .balance) {
            self = .balance(balance)
        } else {
            self = .subscription(try container.decode(WebhookSubscription.self, forKey: .subscription))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .balance(let balance): try container.encode(balance, forKey: .balance)
        case .subscription(let subscription): try container.encode(subscription, forKey: .subscription)
        }
    }
}
