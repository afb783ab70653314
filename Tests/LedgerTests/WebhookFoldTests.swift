import AppStore
import Foundation
import Primitives
import Testing

@testable import Ledger

/// `WebhookFold`: the webhook messages of each ledger event (docs/webhooks.md), a pure
/// fold over the log whose state is kept per key. Tests read given (the events before) → when
/// (the log is folded) → then (the messages, their fields and their bodies).
@Suite("Webhook messages folded from the log")
struct WebhookFoldTests {
    static let t0 = Given.t0
    static let minute = Given.minute
    static let day = Given.day

    /// `d` days after `t0`.
    static func at(day d: Int64) -> Int64 { Self.t0 + d * Self.day }

    /// `m` minutes after `t0`.
    static func at(minute m: Int64) -> Int64 { Self.t0 + m * Self.minute }

    // MARK: Folding

    /// Folds `events` as recorded a minute apart from `t0`, the first at `position`.
    static func fold(_ events: [LedgerEvent], startingAt position: Int64 = 1) -> [WebhookEvent] {
        fold(timeline: events.enumerated().map { index, event in (event, Self.at(minute: Int64(index))) }, startingAt: position)
    }

    /// Folds events each recorded at its own time (milliseconds), the first at `position`.
    static func fold(timeline: [(LedgerEvent, Int64)], startingAt position: Int64 = 1) -> [WebhookEvent] {
        var states: [String: WebhookState] = [:]
        return fold(timeline: timeline, startingAt: position, states: &states)
    }

    /// As above, with every state in one dictionary that comes back as the log left it.
    static func fold(timeline: [(LedgerEvent, Int64)], startingAt position: Int64 = 1, states: inout [String: WebhookState]) -> [WebhookEvent] {
        var out: [WebhookEvent] = []
        for (index, (event, recordedAtMs)) in timeline.enumerated() {
            out += WebhookFold.messages(
                for: event, at: EventPlace(position: position + Int64(index), recordedAtMs: recordedAtMs, hash: hash(position + Int64(index))),
                states: &states)
        }
        return out
    }

    /// A stand-in chain hash for the event at `position`: its low byte, 32 times.
    static func hash(_ position: Int64) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: position), count: 32) }

    /// The states of `keys` as the runner loads them: decoded from what it stored.
    static func load(_ keys: some Sequence<String>, from stored: [String: Data]) throws -> [String: WebhookState] {
        var states: [String: WebhookState] = [:]
        for key in keys {
            if let data = stored[key] { states[key] = try LedgerJSON.decoder.decode(WebhookState.self, from: data) }
        }
        return states
    }

    // MARK: Events

    /// Alice's (or `user`'s) monthly subscription: its first period, bought at `t0` for 30 days.
    static func subscribed(_ original: String = "S0", by user: String = Given.alice) -> LedgerEvent {
        .purchaseDelivered(Given.delivered(original, Given.monthly, to: user, purchasedAt: Self.t0, expiresAt: Self.at(day: 30)))
    }

    /// A later period of `original`, from day `from` for 30 days, as Apple showed it.
    static func renewed(_ transactionId: String, of original: String = "S0", to user: String = Given.alice, fromDay from: Int64 = 30) -> LedgerEvent {
        .subscriptionRenewalSeen(Given.renewal(
            transactionId, of: original, to: user, purchasedAt: Self.at(day: from), expiresAt: Self.at(day: from + 30)))
    }

    /// What Apple showed of `original` on day `observedDay`: no new transaction, its renewal state.
    static func observed(
        _ original: String = "S0", onDay observedDay: Int64, autoRenew: Bool? = true, inBillingRetry: Bool? = false,
        graceUntilDay: Int64? = nil
    ) -> LedgerEvent {
        .subscriptionObserved(SubscriptionObserved(
            originalTransactionId: original, environment: "Production", entries: [],
            renewal: RenewalObservation(
                observedAtMs: Self.at(day: observedDay), autoRenew: autoRenew, autoRenewProductId: Given.monthly,
                inBillingRetry: inBillingRetry, gracePeriodExpiresMs: graceUntilDay.map { Self.at(day: $0) }),
            source: "notification-\(observedDay)"))
    }

    /// Apple refunded `transactionId`, by default all of a pack of 100 coins of Alice's.
    static func refund(
        _ transactionId: String, _ productId: String = Given.coins, kind: ProductKind = .consumable, user: String = Given.alice,
        grants: [String: Int64] = ["coins": 100], fractionMilli: Int64? = nil, takenBack: [String: Int64]? = nil
    ) -> PurchaseRefunded {
        PurchaseRefunded(
            transactionId: transactionId, originalTransactionId: transactionId, productId: productId, kind: kind, quantity: 1,
            userId: user, environment: "Production", grants: grants, refundedAtMs: Self.at(day: 1), reason: 0,
            revocation: "refund", source: "notification-refund", refundedFractionMilli: fractionMilli, grantsTakenBack: takenBack)
    }

    static func reversal(of refund: PurchaseRefunded) -> LedgerEvent {
        .refundReversed(RefundReversed(refund: refund, reversedAtMs: Self.at(day: 2), source: "notification-reversal"))
    }

    static func spent(_ amount: Int64, by user: String = Given.alice, balanceAfter: Int64) -> LedgerEvent {
        .balanceSpent(BalanceSpent(
            userId: user, unit: "coins", amount: amount, spendId: "spend-\(user)-\(amount)", reason: nil, balanceAfter: balanceAfter,
            attributions: [], spentAtMs: Self.t0))
    }

    static func claimed(_ original: String = "S0", _ productId: String = Given.monthly, kind: ProductKind = .autoRenewable, by user: String = Given.alice) -> LedgerEvent {
        .ownershipClaimed(OwnershipClaimed(
            originalTransactionId: original, productId: productId, kind: kind, userId: user, transactionId: original, environment: "Production"))
    }

    static func transferred(
        _ original: String = "S0", _ productId: String = Given.monthly, kind: ProductKind = .autoRenewable,
        from: String = Given.alice, to: String = Given.bob
    ) -> LedgerEvent {
        .ownershipTransferred(OwnershipTransferred(
            originalTransactionId: original, productId: productId, kind: kind, fromUserId: from, toUserId: to,
            transactionId: original, submissionId: "sub-2", environment: "Production"))
    }

    static var catalogLoaded: LedgerEvent {
        .catalogLoaded(CatalogLoaded(products: Given.catalog.products.values.sorted { $0.productId < $1.productId }))
    }

    static var appleResponded: LedgerEvent {
        .appleResponded(AppleResponded(
            submissionId: "sub-1", endpoint: "production", url: "https://buy.itunes.apple.com/verifyReceipt", httpStatus: 200,
            status: 0, latencyMs: 120, startedAtMs: Self.t0, documentSha256: "ab12", failure: nil))
    }

    /// One log with every kind of message: coins for Alice and Bob, spent, refunded in part and
    /// given back; Alice's subscription, moved to Bob, renewed, in grace, in billing retry, expired.
    static var story: [(LedgerEvent, Int64)] {
        let prorated = Self.refund("C1", fractionMilli: 25_000, takenBack: ["coins": 25])
        return [
            (.orderCreated(Given.order("o-1")), Self.t0),  // 1
            (.purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice, orderId: "o-1")), Self.at(minute: 1)),  // 2
            (.purchaseDelivered(Given.delivered("C2", Given.coins, to: Given.bob)), Self.at(minute: 2)),  // 3
            (Self.spent(30, balanceAfter: 70), Self.at(minute: 3)),  // 4
            (Self.subscribed(), Self.at(minute: 4)),  // 5
            (Self.claimed(), Self.at(minute: 5)),  // 6
            (Self.observed(onDay: 1, autoRenew: true), Self.at(day: 1)),  // 7
            (.purchaseRefunded(prorated), Self.at(day: 2)),  // 8
            (Self.transferred(), Self.at(day: 3)),  // 9
            (Self.observed(onDay: 4, autoRenew: false), Self.at(day: 4)),  // 10
            (Self.renewed("S1", to: Given.bob), Self.at(day: 30)),  // 11
            (Self.reversal(of: prorated), Self.at(day: 31)),  // 12
            (Self.observed(onDay: 61, autoRenew: false, inBillingRetry: true, graceUntilDay: 66), Self.at(day: 61)),  // 13
            (Self.observed(onDay: 67, autoRenew: false, inBillingRetry: true, graceUntilDay: 66), Self.at(day: 67)),  // 14
            (Self.spent(50, by: Given.bob, balanceAfter: 50), Self.at(day: 68)),  // 15
            (Self.observed(onDay: 70, autoRenew: false, inBillingRetry: false), Self.at(day: 70)),  // 16
            (Self.observed(onDay: 70, autoRenew: false, inBillingRetry: false), Self.at(day: 71)),  // 17
            (Self.catalogLoaded, Self.at(day: 72)),  // 18
            (.purchaseDelivered(Given.delivered("T1", Given.removeAds, to: Given.alice)), Self.at(day: 73)),  // 19
            (Self.appleResponded, Self.at(day: 74)),  // 20
        ]
    }

    // MARK: Reading messages

    /// `evt_POSITION_SEQUENCE type user` (the id without its hash part), to compare a log's
    /// messages at a glance.
    static func line(_ message: WebhookEvent) -> String {
        "evt_\(message.position)_\(message.sequence) \(message.type.rawValue) \(message.userId ?? "-")"
    }

    /// A `balance.changed` message as `unit change balance` (`coins -30 70`); nil for other types.
    static func balanceLine(_ message: WebhookEvent) -> String? {
        guard message.type == .balanceChanged, case .string(let unit)? = message.fields["unit"],
              case .integer(let change)? = message.fields["change"], case .integer(let balance)? = message.fields["balance"]
        else { return nil }
        return "\(unit) \(change) \(balance)"
    }

    /// The fields every subscription message has.
    static func subscriptionFields(_ original: String = "S0", expiresOnDay expiry: Int64) -> [String: JSONValue] {
        [
            "original_transaction_id": .string(original), "product_id": .string(Given.monthly),
            "expires_at": .string(RevenueDay.iso8601(Self.at(day: expiry))),
        ]
    }

    /// The body decoded as any receiver would: its top level and its `data`.
    static func decoded(_ message: WebhookEvent) throws -> (top: [String: Any], data: [String: Any]) {
        let top = try #require(try JSONSerialization.jsonObject(with: message.body) as? [String: Any])
        let data = try #require(top["data"] as? [String: Any])
        return (top, data)
    }

    /// docs/webhooks.md's `data` fields of each type, besides `position` and `user_id`.
    static let contractFields: [WebhookEventType: Set<String>] = {
        let subscription: Set<String> = ["original_transaction_id", "product_id", "expires_at"]
        return [
            .purchaseDelivered: ["transaction_id", "original_transaction_id", "product_id", "quantity", "environment", "order_id"],
            .purchaseRefunded: ["transaction_id", "original_transaction_id", "product_id", "refunded_fraction_milli"],
            .refundReversed: ["transaction_id"],
            .subscriptionRenewed: subscription,
            .subscriptionExpired: subscription,
            .subscriptionInBillingRetry: subscription,
            .subscriptionInGracePeriod: subscription,
            .subscriptionAutoRenewChanged: subscription,
            .ownershipTransferred: ["original_transaction_id", "from_user_id", "user_id"],
            .balanceChanged: ["unit", "balance", "change"],
        ]
    }()

    // MARK: Purchases and balances

    @Test("a consumable's delivery: purchase.delivered, then balance.changed with what it granted")
    func consumableDelivery() throws {
        // Given Alice's pack of 100 coins, ordered as o-1, recorded at position 7
        let delivered = Given.delivered("C1", Given.coins, to: Given.alice, orderId: "o-1")
        // When it is folded
        let messages = Self.fold([.purchaseDelivered(delivered)], startingAt: 7)
        // Then
        try #require(messages.count == 2)
        #expect(messages.map(\.type) == [.purchaseDelivered, .balanceChanged])
        #expect(messages.map(\.sequence) == [0, 1])
        // Ids name the position, the chain hash's first 16 hex digits and the sequence.
        #expect(messages.map(\.id) == ["evt_7_0707070707070707_0", "evt_7_0707070707070707_1"])
        #expect(messages.allSatisfy { $0.hash == Self.hash(7) })
        #expect(messages.allSatisfy { $0.position == 7 && $0.userId == Given.alice && $0.recordedAtMs == Self.t0 })
        #expect(messages[0].fields == [
            "transaction_id": .string("C1"), "original_transaction_id": .string("C1"), "product_id": .string(Given.coins),
            "quantity": .integer(1), "environment": .string("Production"), "order_id": .string("o-1"),
        ])
        #expect(messages[1].fields == ["unit": .string("coins"), "change": .integer(100), "balance": .integer(100)])
    }

    @Test("a delivery without an order says order_id null; quantity multiplies the grant")
    func deliveryWithoutOrder() throws {
        // Given Bob's three packs, bought without an order
        let delivered = Given.delivered("C2", Given.coins, to: Given.bob, quantity: 3)
        // When
        let messages = Self.fold([.purchaseDelivered(delivered)])
        // Then
        try #require(messages.count == 2)
        #expect(messages[0].fields["order_id"] == .null)
        #expect(messages[0].fields["quantity"] == .integer(3))
        #expect(messages[0].userId == Given.bob)
        #expect(messages.compactMap(Self.balanceLine) == ["coins 300 300"])
    }

    @Test("balances run across events: spent, refunded in full, the refund reversed")
    func runningBalance() throws {
        // Given 100 coins delivered, 30 spent, the purchase refunded in full, the refund reversed
        let refund = Self.refund("C1")
        let events: [LedgerEvent] = [
            .purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice)),
            Self.spent(30, balanceAfter: 70),
            .purchaseRefunded(refund),
            Self.reversal(of: refund),
        ]
        // When
        let messages = Self.fold(events)
        // Then
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice", "evt_1_1 balance.changed user-alice",
            "evt_2_0 balance.changed user-alice",
            "evt_3_0 purchase.refunded user-alice", "evt_3_1 balance.changed user-alice",
            "evt_4_0 refund.reversed user-alice", "evt_4_1 balance.changed user-alice",
        ])
        #expect(messages.compactMap(Self.balanceLine) == ["coins 100 100", "coins -30 70", "coins -100 -30", "coins 100 70"])
        let refunded = try #require(messages.first { $0.type == .purchaseRefunded })
        #expect(refunded.fields == [
            "transaction_id": .string("C1"), "original_transaction_id": .string("C1"), "product_id": .string(Given.coins),
            "refunded_fraction_milli": .integer(100_000),
        ])
        let reversed = try #require(messages.first { $0.type == .refundReversed })
        #expect(reversed.fields == ["transaction_id": .string("C1")])
    }

    @Test("a prorated refund takes back its share, and its reversal gives that share back")
    func proratedRefund() throws {
        // Given 100 coins delivered, then 25% of the purchase refunded
        let refund = Self.refund("C1", fractionMilli: 25_000, takenBack: ["coins": 25])
        // When
        let messages = Self.fold([
            .purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice)), .purchaseRefunded(refund), Self.reversal(of: refund),
        ])
        // Then
        let refunded = try #require(messages.first { $0.type == .purchaseRefunded })
        #expect(refunded.fields["refunded_fraction_milli"] == .integer(25_000))
        #expect(messages.compactMap(Self.balanceLine) == ["coins 100 100", "coins -25 75", "coins 25 100"])
    }

    @Test("each unit's balance is its own, told in unit order; each user's is their own")
    func unitsAndUsers() {
        // Given a delivery granting coins and gems, and Bob's coins
        var both = Given.delivered("C1", Given.coins, to: Given.alice)
        both.grants = ["gems": 5, "coins": 100, "stars": 0]
        // When
        let messages = Self.fold([.purchaseDelivered(both), .purchaseDelivered(Given.delivered("C2", Given.coins, to: Given.bob))])
        // Then: a unit granted nothing is not told
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice", "evt_1_1 balance.changed user-alice", "evt_1_2 balance.changed user-alice",
            "evt_2_0 purchase.delivered user-bob", "evt_2_1 balance.changed user-bob",
        ])
        #expect(messages.compactMap(Self.balanceLine) == ["coins 100 100", "gems 5 5", "coins 100 100"])
    }

    @Test("two apps: each message names its app, each app's coins run on their own, a subscription's later messages name the app it was sold in")
    func messagesPerApp() {
        // Given Alice's coins bought in two apps, a refund in one, and a subscription in the second
        var game = Given.delivered("G1", Given.coins, to: Given.alice)
        game.bundleId = "com.acme.game"
        var puzzle = Given.delivered("P1", Given.coins, to: Given.alice)
        puzzle.bundleId = "com.acme.puzzle"
        var refund = Self.refund("P1")
        refund.bundleId = "com.acme.puzzle"
        guard case .purchaseDelivered(var subscription) = Self.subscribed() else { return }
        subscription.bundleId = "com.acme.puzzle"
        // When
        let messages = Self.fold([
            .purchaseDelivered(game), .purchaseDelivered(puzzle), .purchaseRefunded(refund), .purchaseDelivered(subscription),
            Self.observed(onDay: 31, autoRenew: false),
        ])
        // Then
        func app(_ message: WebhookEvent) -> String {
            if case .string(let app)? = message.fields["bundle_id"] { app } else { "none" }
        }
        #expect(messages.map { "\($0.type.rawValue) \(app($0))" } == [
            "purchase.delivered com.acme.game", "balance.changed com.acme.game",
            "purchase.delivered com.acme.puzzle", "balance.changed com.acme.puzzle",
            "purchase.refunded com.acme.puzzle", "balance.changed com.acme.puzzle",
            // Told from an observation, which names no app: the subscription's own.
            "purchase.delivered com.acme.puzzle", "subscription.expired com.acme.puzzle",
        ])
        // The refund took the puzzle's coins back to 0; the game's stayed 100.
        #expect(messages.compactMap(Self.balanceLine) == ["coins 100 100", "coins 100 100", "coins -100 0"])
        #expect(WebhookFold.keys(for: .purchaseDelivered(game)) == ["b com.acme.game 5:coins:\(Given.alice)"])
    }

    @Test("an owned product's refund is told without a balance change, even when it granted units")
    func ownedProductRefund() {
        // Given a non-consumable that granted 5 gems, refunded
        let delivered = Given.delivered("T1", Given.removeAds, to: Given.alice)
        let refund = Self.refund("T1", Given.removeAds, kind: .nonConsumable, grants: ["gems": 5])
        // When
        let messages = Self.fold([.purchaseDelivered(delivered), .purchaseRefunded(refund)])
        // Then
        #expect(messages.map(Self.line) == ["evt_1_0 purchase.delivered user-alice", "evt_2_0 purchase.refunded user-alice"])
        #expect(WebhookFold.keys(for: .purchaseRefunded(refund)).isEmpty)
    }

    @Test("the balances told are the balances projection's")
    func balancesAgreeWithProjection() {
        // Given the story's log
        let events = Self.story.map { $0.0 }
        // When
        let messages = Self.fold(timeline: Self.story)
        // Then: the last balance told of each user and unit is the sum of the projection's deltas
        var told: [String: Int64] = [:]
        for message in messages where message.type == .balanceChanged {
            if case .string(let unit)? = message.fields["unit"], case .integer(let balance)? = message.fields["balance"] {
                told["\(message.userId ?? "-")/\(unit)"] = balance
            }
        }
        #expect(told == ProjectionTests.balances(after: events))
        #expect(told == ["\(Given.alice)/coins": 70, "\(Given.bob)/coins": 50])
    }

    // MARK: Subscriptions

    @Test("a subscription's purchase is told as purchase.delivered alone; a renewal Apple showed as subscription.renewed")
    func subscriptionPurchaseThenRenewal() throws {
        // Given Alice's monthly subscription bought at t0, and its second period seen on day 30
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.renewed("S1"), Self.at(day: 30)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then: no balance, no renewal for the first purchase
        #expect(messages.map(Self.line) == ["evt_1_0 purchase.delivered user-alice", "evt_2_0 subscription.renewed user-alice"])
        try #require(messages.count == 2)
        #expect(messages[0].fields["original_transaction_id"] == .string("S0"))
        #expect(messages[1].fields == Self.subscriptionFields(expiresOnDay: 60))
        #expect(messages[1].fields["expires_at"] == .string("2024-01-13T22:13:20.000Z"))
        #expect(messages[1].recordedAtMs == Self.at(day: 30))
    }

    @Test("a later period the client submitted without an order is told as a renewal too")
    func deliveredRenewal() {
        // Given Alice's subscription, and its second period delivered as a renewal
        let second = Given.delivered(
            "S1", Given.monthly, to: Given.alice, original: "S0", purchasedAt: Self.at(day: 30), expiresAt: Self.at(day: 60),
            match: .renewal)
        // When
        let messages = Self.fold(timeline: [(Self.subscribed(), Self.t0), (.purchaseDelivered(second), Self.at(day: 30))])
        // Then
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice", "evt_2_0 purchase.delivered user-alice", "evt_2_1 subscription.renewed user-alice",
        ])
        #expect(messages.last?.fields == Self.subscriptionFields(expiresOnDay: 60))
    }

    @Test("a subscription delivered for any other reason is no renewal",
          arguments: [MatchReason.noOrder, .orderId, .appAccountToken, .productAndTime, .restore, .transferred])
    func deliveredNotRenewal(match: MatchReason) {
        // Given Alice's subscription, and another period delivered
        let second = Given.delivered(
            "S1", Given.monthly, to: Given.alice, original: "S0", purchasedAt: Self.at(day: 30), expiresAt: Self.at(day: 60),
            match: match)
        // When
        let messages = Self.fold(timeline: [(Self.subscribed(), Self.t0), (.purchaseDelivered(second), Self.at(day: 30))])
        // Then
        #expect(messages.map(\.type) == [.purchaseDelivered, .purchaseDelivered])
    }

    @Test("auto-renew turned off is told once; the first observation tells nothing")
    func autoRenewChanged() throws {
        // Given Alice's subscription, seen renewing on day 1, then not on days 2 and 3
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.observed(onDay: 1, autoRenew: true), Self.at(day: 1)),
            (Self.observed(onDay: 2, autoRenew: false), Self.at(day: 2)),
            (Self.observed(onDay: 3, autoRenew: false), Self.at(day: 3)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then
        #expect(messages.map(Self.line) == ["evt_1_0 purchase.delivered user-alice", "evt_3_0 subscription.auto_renew_changed user-alice"])
        let changed = try #require(messages.last)
        var expected = Self.subscriptionFields(expiresOnDay: 30)
        expected["auto_renew"] = .bool(false)
        #expect(changed.fields == expected)
    }

    @Test("after expiry with Apple retrying billing: subscription.in_billing_retry")
    func billingRetry() {
        // Given Alice's subscription (ends day 30), seen on day 31 in billing retry
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.observed(onDay: 31, inBillingRetry: true), Self.at(day: 31)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then
        #expect(messages.map(Self.line) == ["evt_1_0 purchase.delivered user-alice", "evt_2_0 subscription.in_billing_retry user-alice"])
        #expect(messages.last?.fields == Self.subscriptionFields(expiresOnDay: 30))
    }

    @Test("in the grace period, then in billing retry when it ends, then expired: each told once")
    func graceThenRetryThenExpired() {
        // Given Alice's subscription (ends day 30), Apple retrying billing with grace until day 36
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.observed(onDay: 31, inBillingRetry: true, graceUntilDay: 36), Self.at(day: 31)),
            (Self.observed(onDay: 37, inBillingRetry: true, graceUntilDay: 36), Self.at(day: 37)),
            (Self.observed(onDay: 38, inBillingRetry: true, graceUntilDay: 36), Self.at(day: 38)),
            (Self.observed(onDay: 40, inBillingRetry: false), Self.at(day: 40)),
            (Self.observed(onDay: 41, inBillingRetry: false), Self.at(day: 41)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice",
            "evt_2_0 subscription.in_grace_period user-alice",
            "evt_3_0 subscription.in_billing_retry user-alice",
            "evt_5_0 subscription.expired user-alice",
        ])
        #expect(messages.dropFirst().allSatisfy { $0.fields == Self.subscriptionFields(expiresOnDay: 30) })
    }

    @Test("expired is told once: the same observation again tells nothing more")
    func expiredOnce() {
        // Given Alice's subscription (ends day 30), and the same observation recorded twice after it
        let expired = Self.observed(onDay: 31, inBillingRetry: false)
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.observed(onDay: 10), Self.at(day: 10)),
            (expired, Self.at(day: 31)),
            (expired, Self.at(day: 32)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then: an observation while active tells nothing either
        #expect(messages.map(Self.line) == ["evt_1_0 purchase.delivered user-alice", "evt_3_0 subscription.expired user-alice"])
        #expect(messages.last?.fields == Self.subscriptionFields(expiresOnDay: 30))
    }

    @Test("a renewal after expiry makes it active again, so a later expiry is told again")
    func expiredRenewedExpired() {
        // Given Alice's subscription expired on day 31, renewed on day 32 until day 62, seen again on day 63
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.observed(onDay: 31, inBillingRetry: false), Self.at(day: 31)),
            (Self.renewed("S1", fromDay: 32), Self.at(day: 32)),
            (Self.observed(onDay: 63, inBillingRetry: false), Self.at(day: 63)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice", "evt_2_0 subscription.expired user-alice",
            "evt_3_0 subscription.renewed user-alice", "evt_4_0 subscription.expired user-alice",
        ])
        #expect(messages.last?.fields == Self.subscriptionFields(expiresOnDay: 62))
    }

    @Test("expiry and auto-renew turned off in one observation: told in docs/webhooks.md's order")
    func expiredAndAutoRenewOff() {
        // Given Alice's subscription renewing on day 10, then seen expired with auto-renew off on day 31
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.observed(onDay: 10, autoRenew: true), Self.at(day: 10)),
            (Self.observed(onDay: 31, autoRenew: false, inBillingRetry: false), Self.at(day: 31)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice",
            "evt_3_0 subscription.expired user-alice", "evt_3_1 subscription.auto_renew_changed user-alice",
        ])
    }

    // MARK: Ownership

    @Test("a transfer is told to the new owner, and the subscription's later messages are theirs")
    func ownershipTransferred() throws {
        // Given Alice's subscription, claimed, seen renewing, then moved to Bob
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.claimed(), Self.t0),
            (Self.observed(onDay: 1, autoRenew: true), Self.at(day: 1)),
            (Self.transferred(), Self.at(day: 2)),
            (Self.observed(onDay: 3, autoRenew: false), Self.at(day: 3)),
            (Self.renewed("S1", to: Given.bob), Self.at(day: 30)),
            (Self.observed(onDay: 61, autoRenew: false, inBillingRetry: false), Self.at(day: 61)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice",
            "evt_4_0 ownership.transferred user-bob",
            "evt_5_0 subscription.auto_renew_changed user-bob",
            "evt_6_0 subscription.renewed user-bob",
            "evt_7_0 subscription.expired user-bob",
        ])
        let transfer = try #require(messages.first { $0.type == .ownershipTransferred })
        #expect(transfer.fields == ["original_transaction_id": .string("S0"), "from_user_id": .string(Given.alice)])
        let data = try Self.decoded(transfer).data
        #expect(data["user_id"] as? String == Given.bob)
        #expect(data["from_user_id"] as? String == Given.alice)
    }

    @Test("a subscription's later messages keep the new owner even when the observation names no one")
    func ownerKeptWithoutRenewal() {
        // Given Alice's subscription moved to Bob, then seen in billing retry after its end
        let timeline: [(LedgerEvent, Int64)] = [
            (Self.subscribed(), Self.t0),
            (Self.transferred(), Self.at(day: 2)),
            (Self.observed(onDay: 31, inBillingRetry: true), Self.at(day: 31)),
        ]
        // When
        let messages = Self.fold(timeline: timeline)
        // Then
        #expect(messages.map(Self.line) == [
            "evt_1_0 purchase.delivered user-alice", "evt_2_0 ownership.transferred user-bob", "evt_3_0 subscription.in_billing_retry user-bob",
        ])
    }

    @Test("a non-consumable's transfer is told too, and needs no state")
    func nonConsumableTransfer() {
        // Given Alice's non-consumable T1 moved to Bob
        let transfer = Self.transferred("T1", Given.removeAds, kind: .nonConsumable)
        // When
        var states: [String: WebhookState] = [:]
        let messages = WebhookFold.messages(for: transfer, at: EventPlace(position: 4, recordedAtMs: Self.t0), states: &states)
        // Then
        #expect(messages.map(Self.line) == ["evt_4_0 ownership.transferred user-bob"])
        #expect(messages.first?.fields == ["original_transaction_id": .string("T1"), "from_user_id": .string(Given.alice)])
        #expect(WebhookFold.keys(for: transfer).isEmpty)
        #expect(states.isEmpty)
    }

    // MARK: Events that tell nothing

    @Test("events that change nothing a message tells produce none, and touch no state")
    func silentEvents() {
        // Given events of orders, Apple's answers, the catalog, consent, a claim of a non-consumable, an unknown type
        let silent: [LedgerEvent] = [
            .orderCreated(Given.order("o-1")),
            .orderFulfilled(OrderFulfilled(orderId: "o-1", transactionId: "C1")),
            Self.appleResponded,
            Self.catalogLoaded,
            .consumptionConsentRecorded(ConsumptionConsentRecorded(userId: Given.alice, consumptionData: true, recordedAtMs: Self.t0)),
            .appleNotificationReceived(AppleNotificationReceived(
                notificationId: "n-1", version: "v2", notificationType: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED",
                environment: "Production", transactionId: "S0", originalTransactionId: "S0", consumptionRequestReason: nil,
                documentSha256: "cd34", receivedAtMs: Self.t0)),
            Self.claimed("T1", Given.removeAds, kind: .nonConsumable),
            .unknown(type: "SomethingNew"),
        ]
        for event in silent {
            // When it is folded onto a known balance
            var states: [String: WebhookState] = [WebhookState.balanceKey(bundleId: nil, userId: Given.alice, unit: "coins"): .balance(70)]
            let before = states
            let messages = WebhookFold.messages(for: event, at: EventPlace(position: 1, recordedAtMs: Self.t0), states: &states)
            // Then
            #expect(messages.isEmpty, "\(event)")
            #expect(WebhookFold.keys(for: event).isEmpty, "\(event)")
            #expect(states == before, "\(event)")
        }
    }

    @Test("a subscription's claim tells nothing, but its owner is kept")
    func subscriptionClaim() {
        // Given a subscription first known from its claim, then a renewal naming its owner
        var states: [String: WebhookState] = [:]
        let claim = Self.claimed(by: Given.bob)
        // When
        let messages = WebhookFold.messages(for: claim, at: EventPlace(position: 1, recordedAtMs: Self.t0), states: &states)
        // Then
        #expect(messages.isEmpty)
        #expect(WebhookFold.keys(for: claim) == [WebhookState.subscriptionKey("S0")])
        guard case .subscription(let subscription)? = states[WebhookState.subscriptionKey("S0")] else {
            Issue.record("the claim stored no subscription state")
            return
        }
        #expect(subscription.userId == Given.bob)
        #expect(subscription.productId == Given.monthly)
    }

    // MARK: Keys and stored states

    @Test("the keys each event names")
    func keys() {
        let coinsOfAlice = WebhookState.balanceKey(bundleId: nil, userId: Given.alice, unit: "coins")
        #expect(coinsOfAlice == "b:5:coins:user-alice")
        #expect(WebhookState.subscriptionKey("S0") == "s:S0")
        // A unit and user never spell another pair's key.
        #expect(WebhookState.balanceKey(bundleId: nil, userId: "b", unit: "a:c") != WebhookState.balanceKey(bundleId: nil, userId: "c:b", unit: "a"))
        #expect(WebhookFold.keys(for: .purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice))) == [coinsOfAlice])
        #expect(WebhookFold.keys(for: Self.subscribed()) == ["s:S0"])
        #expect(WebhookFold.keys(for: .purchaseDelivered(Given.delivered("T1", Given.removeAds, to: Given.alice))).isEmpty)
        #expect(WebhookFold.keys(for: Self.spent(30, balanceAfter: 70)) == [coinsOfAlice])
        #expect(WebhookFold.keys(for: .purchaseRefunded(Self.refund("C1"))) == [coinsOfAlice])
        #expect(WebhookFold.keys(for: Self.reversal(of: Self.refund("C1"))) == [coinsOfAlice])
        let subscriptionRefund = Self.refund("S0", Given.monthly, kind: .autoRenewable, grants: [:])
        #expect(WebhookFold.keys(for: .purchaseRefunded(subscriptionRefund)) == ["s:S0"])
        #expect(WebhookFold.keys(for: Self.reversal(of: subscriptionRefund)) == ["s:S0"])
        #expect(WebhookFold.keys(for: Self.renewed("S1")) == ["s:S0"])
        #expect(WebhookFold.keys(for: Self.observed(onDay: 1)) == ["s:S0"])
        #expect(WebhookFold.keys(for: Self.claimed()) == ["s:S0"])
        #expect(WebhookFold.keys(for: Self.transferred()) == ["s:S0"])
    }

    @Test("folded event by event with only the states its keys name, stored as JSON between events, the log tells the same")
    func foldByKeys() throws {
        // Given the story, folded with every state at hand
        let timeline = Self.story
        var full: [String: WebhookState] = [:]
        let expected = Self.fold(timeline: timeline, states: &full)
        // When each event is folded as the runner folds it: its keys' states loaded, then stored back
        var stored: [String: Data] = [:]
        var messages: [WebhookEvent] = []
        for (index, (event, recordedAtMs)) in timeline.enumerated() {
            let keys = WebhookFold.keys(for: event)
            var states = try Self.load(keys, from: stored)
            messages += WebhookFold.messages(
                for: event, at: EventPlace(position: Int64(index) + 1, recordedAtMs: recordedAtMs, hash: Self.hash(Int64(index) + 1)), states: &states)
            #expect(Set(states.keys).isSubset(of: keys), "event \(index + 1) left a state of a key keys(for:) does not name")
            for (key, state) in states { stored[key] = try LedgerJSON.encoder.encode(state) }
        }
        // Then the same messages, the same bytes, the same states
        #expect(messages == expected)
        #expect(messages.map(\.body) == expected.map(\.body))
        let reloaded = try Self.load(stored.keys, from: stored)
        #expect(reloaded == full)
    }

    @Test("folded page by page, loading only the keys a page names, the log tells the same", arguments: [1, 2, 3, 5, 100])
    func foldByPages(pageSize: Int) throws {
        // Given the story, folded at once
        let timeline = Self.story
        let expected = Self.fold(timeline: timeline)
        // When it is folded in pages of `pageSize`, only changed states stored back
        var stored: [String: Data] = [:]
        var messages: [WebhookEvent] = []
        for start in stride(from: 0, to: timeline.count, by: pageSize) {
            let page = Array(timeline[start..<min(start + pageSize, timeline.count)])
            let keys = Set(page.flatMap { WebhookFold.keys(for: $0.0) })
            var states = try Self.load(keys, from: stored)
            let loaded = states
            for (offset, (event, recordedAtMs)) in page.enumerated() {
                let place = EventPlace(position: Int64(start + offset) + 1, recordedAtMs: recordedAtMs, hash: Self.hash(Int64(start + offset) + 1))
                messages += WebhookFold.messages(for: event, at: place, states: &states)
            }
            #expect(Set(states.keys).isSubset(of: keys))
            for (key, state) in states where loaded[key] != state { stored[key] = try LedgerJSON.encoder.encode(state) }
        }
        // Then
        #expect(messages == expected)
    }

    @Test("states round-trip through the ledger's JSON coders, as the runner stores them")
    func stateRoundTrip() throws {
        // Given states of every shape, and every state the story leaves
        var subscription = WebhookSubscription()
        subscription.productId = Given.monthly
        subscription.userId = Given.bob
        subscription.entries = [SubscriptionEntry(
            transactionId: "S0", productId: Given.monthly, purchaseDateMs: Self.t0, expiresDateMs: Self.at(day: 30),
            cancellationDateMs: Self.at(day: 10), isTrial: true, isUpgraded: false)]
        subscription.renewal = RenewalObservation(
            observedAtMs: Self.t0, autoRenew: false, autoRenewProductId: Given.yearly, inBillingRetry: true,
            gracePeriodExpiresMs: Self.at(day: 36))
        subscription.toldStatus = .inGracePeriod
        subscription.toldAutoRenew = false
        var storyStates: [String: WebhookState] = [:]
        _ = Self.fold(timeline: Self.story, states: &storyStates)
        #expect(storyStates.count == 3)  // Alice's coins, Bob's coins, S0, and nothing else
        let states: [WebhookState] = [.balance(-30), .balance(0), .subscription(subscription), .subscription(WebhookSubscription())]
        for state in states + storyStates.values {
            // When
            let data = try LedgerJSON.encoder.encode(state)
            let decoded = try LedgerJSON.decoder.decode(WebhookState.self, from: data)
            // Then
            #expect(decoded == state, "\(String(decoding: data, as: UTF8.self))")
        }
        let balance = try LedgerJSON.encoder.encode(WebhookState.balance(-30))
        #expect(String(decoding: balance, as: UTF8.self) == #"{"balance":-30}"#)
    }

    // MARK: Bodies

    @Test("a body is compact JSON with sorted keys: type, timestamp (the recorded time), data with position and user_id")
    func exactBodies() throws {
        // Given 100 coins delivered, refunded, the refund reversed, a minute apart
        let refund = Self.refund("C1")
        let messages = Self.fold([
            .purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice)), .purchaseRefunded(refund), Self.reversal(of: refund),
        ])
        // When
        let reversed = try #require(messages.first { $0.type == .refundReversed })
        let debited = try #require(messages.first { $0.position == 2 && $0.type == .balanceChanged })
        // Then
        #expect(String(decoding: reversed.body, as: UTF8.self)
            == #"{"data":{"hash":"0303030303030303030303030303030303030303030303030303030303030303","position":3,"transaction_id":"C1","user_id":"user-alice"},"timestamp":"2023-11-14T22:15:20.000Z","type":"refund.reversed"}"#)
        #expect(String(decoding: debited.body, as: UTF8.self)
            == #"{"data":{"balance":0,"change":-100,"hash":"0202020202020202020202020202020202020202020202020202020202020202","position":2,"unit":"coins","user_id":"user-alice"},"timestamp":"2023-11-14T22:14:20.000Z","type":"balance.changed"}"#)
    }

    @Test("a message of no one has no user_id; nulls are written as null; the timestamp keeps its milliseconds")
    func bodyWithoutUser() {
        // Given a message made of no user's subscription
        let hash = [UInt8](0..<32)
        let message = WebhookEvent(
            position: 5, hash: hash, sequence: 2, type: .subscriptionExpired, userId: nil, recordedAtMs: Self.t0 + 45,
            fields: ["original_transaction_id": .string("S9"), "product_id": .null, "expires_at": .null])
        // Then
        #expect(message.id == "evt_5_0001020304050607_2")
        #expect(WebhookEvent.id(position: 12, hashPrefix: "ffeeddccbbaa9988", sequence: 0) == "evt_12_ffeeddccbbaa9988_0")
        #expect(String(decoding: message.body, as: UTF8.self)
            == #"{"data":{"expires_at":null,"hash":"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f","original_transaction_id":"S9","position":5,"product_id":null},"timestamp":"2023-11-14T22:13:20.045Z","type":"subscription.expired"}"#)
    }

    @Test("a delivery's body, decoded as a receiver decodes it")
    func decodedDeliveryBody() throws {
        // Given Bob's coins, bought without an order, recorded at position 1
        let messages = Self.fold([.purchaseDelivered(Given.delivered("C2", Given.coins, to: Given.bob))])
        let delivered = try #require(messages.first)
        // When
        let (top, data) = try Self.decoded(delivered)
        // Then
        #expect(Set(top.keys) == ["type", "timestamp", "data"])
        #expect(top["type"] as? String == "purchase.delivered")
        #expect(top["timestamp"] as? String == "2023-11-14T22:13:20.000Z")
        #expect(Set(data.keys) == [
            "position", "hash", "user_id", "transaction_id", "original_transaction_id", "product_id", "quantity", "environment", "order_id",
        ])
        #expect(data["position"] as? Int == 1)
        #expect(data["user_id"] as? String == Given.bob)
        #expect(data["transaction_id"] as? String == "C2")
        #expect(data["original_transaction_id"] as? String == "C2")
        #expect(data["product_id"] as? String == Given.coins)
        #expect(data["quantity"] as? Int == 1)
        #expect(data["environment"] as? String == "Production")
        #expect(data["order_id"] is NSNull)
        let balance = try Self.decoded(try #require(messages.last)).data
        #expect(balance["unit"] as? String == "coins")
        #expect(balance["change"] as? Int == 100)
        #expect(balance["balance"] as? Int == 100)
    }

    @Test("an erasure is told as user.erased naming the subject alone, no user")
    func erasureIsTold() throws {
        var states: [String: WebhookState] = [:]
        let place = EventPlace(position: 7, recordedAtMs: 1_000, hash: [UInt8](repeating: 1, count: 32))
        let messages = WebhookFold.messages(
            for: .userErased(UserErased(subject: "s" + String(repeating: "a", count: 26), reason: "asked", erasedAtMs: 1_000)), at: place, states: &states)
        #expect(messages.map(\.type) == [.userErased])
        let (top, data) = try Self.decoded(try #require(messages.first))
        #expect(top["type"] as? String == "user.erased")
        #expect(data["subject"] as? String == "s" + String(repeating: "a", count: 26))
        #expect(data["user_id"] == nil && data["reason"] == nil)
    }

    @Test("every message of the story has docs/webhooks.md's fields, its type's order within its event, and an id of its own")
    func storyFollowsContract() throws {
        // Given the story
        let messages = Self.fold(timeline: Self.story)
        // Then every type docs/webhooks.md lists was told (`subscription.extended`, which docs/webhooks.md lists last
        // for support's acts, is ActingFlowTests'; `user.erased`, ErasureTests' and the test below)
        #expect(Set(messages.map(\.type)) == Set(WebhookEventType.allCases).subtracting([.subscriptionExtended, .userErased]))
        #expect(Set(messages.map(\.id)).count == messages.count)
        let order = WebhookEventType.allCases
        for message in messages {
            let (top, data) = try Self.decoded(message)
            #expect(top["type"] as? String == message.type.rawValue)
            #expect(top["timestamp"] as? String == RevenueDay.iso8601(message.recordedAtMs))
            #expect(data["position"] as? Int == Int(message.position))
            #expect(data["user_id"] as? String == message.userId)
            let required = (Self.contractFields[message.type] ?? []).union(["position", "hash", "user_id"])
            #expect(required.isSubset(of: Set(data.keys)), "\(Self.line(message)) lacks \(required.subtracting(data.keys).sorted())")
            #expect(data["hash"] as? String == Hex.encode(Self.hash(message.position)))
            #expect(message.id == "evt_\(message.position)_\(Hex.encode(Self.hash(message.position).prefix(8)))_\(message.sequence)")
        }
        // Within one ledger event: sequences from 0, types in docs/webhooks.md's order
        for position in Set(messages.map(\.position)) {
            let ofEvent = messages.filter { $0.position == position }
            #expect(ofEvent.map(\.sequence) == (0..<Int32(ofEvent.count)).map { $0 })
            let ranks = ofEvent.compactMap { order.firstIndex(of: $0.type) }
            #expect(ranks == ranks.sorted(), "position \(position)")
        }
    }

    @Test("the story, told")
    func storyTold() {
        // When the story is folded
        let messages = Self.fold(timeline: Self.story)
        // Then
        #expect(messages.map(Self.line) == [
            "evt_2_0 purchase.delivered user-alice", "evt_2_1 balance.changed user-alice",
            "evt_3_0 purchase.delivered user-bob", "evt_3_1 balance.changed user-bob",
            "evt_4_0 balance.changed user-alice",
            "evt_5_0 purchase.delivered user-alice",
            "evt_8_0 purchase.refunded user-alice", "evt_8_1 balance.changed user-alice",
            "evt_9_0 ownership.transferred user-bob",
            "evt_10_0 subscription.auto_renew_changed user-bob",
            "evt_11_0 subscription.renewed user-bob",
            "evt_12_0 refund.reversed user-alice", "evt_12_1 balance.changed user-alice",
            "evt_13_0 subscription.in_grace_period user-bob",
            "evt_14_0 subscription.in_billing_retry user-bob",
            "evt_15_0 balance.changed user-bob",
            "evt_16_0 subscription.expired user-bob",
            "evt_19_0 purchase.delivered user-alice",
        ])
        #expect(messages.compactMap(Self.balanceLine) == [
            "coins 100 100", "coins 100 100", "coins -30 70", "coins -25 45", "coins 25 70", "coins -50 50",
        ])
    }

    @Test("replaying the log makes the same messages, byte for byte; another start moves only the ids")
    func replayDeterminism() {
        // When the story is folded twice, and once more from position 101
        let first = Self.fold(timeline: Self.story)
        let second = Self.fold(timeline: Self.story)
        let shifted = Self.fold(timeline: Self.story, startingAt: 101)
        // Then
        #expect(!first.isEmpty)
        #expect(first == second)
        #expect(first.map(\.body) == second.map(\.body))
        #expect(first.map(\.id) == second.map(\.id))
        #expect(shifted.map(\.position) == first.map { $0.position + 100 })
        #expect(shifted.map(\.type) == first.map(\.type))
        #expect(shifted.map(\.fields) == first.map(\.fields))
    }

    // MARK: The projection

    @Test("the projection names the fold's keys and records each message as one change")
    func projection() {
        // Given the projection and a delivery of coins
        let projection = WebhookEventsProjection()
        let event = LedgerEvent.purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice))
        let place = EventPlace(position: 9, recordedAtMs: Self.t0)
        // When
        var projected: [String: WebhookState] = [:]
        var folded: [String: WebhookState] = [:]
        let changes = projection.fold(event, at: place, states: &projected)
        let messages = WebhookFold.messages(for: event, at: place, states: &folded)
        // Then
        #expect(projection.name == "webhook_events")
        #expect(projection.tables.contains(projection.stateTable))
        #expect(projection.stateKeys(for: event) == WebhookFold.keys(for: event))
        #expect(changes == messages.map(ProjectionChange.addWebhookEvent))
        #expect(changes.count == 2)
        #expect(projected == folded)
        #expect(projected == [WebhookState.balanceKey(bundleId: nil, userId: Given.alice, unit: "coins"): .balance(100)])
        #expect(projection.changes(for: event, at: place).isEmpty)
    }
}
