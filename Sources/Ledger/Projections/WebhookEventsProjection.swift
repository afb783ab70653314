import Foundation

/// A projection whose changes for an event depend on what earlier events left: a state per key,
/// folded along the log. The runner loads the states of the keys a page names, folds the page
/// in log order, and stores the states it changed with the page's rows, in one transaction; so
/// the rows are those of folding the whole log one event at a time, whatever the page size.
public protocol FoldingProjection: Projection {
    associatedtype State: Codable & Sendable & Hashable
    /// Its table of states: `key text PRIMARY KEY, state text` (JSON), one of `tables`.
    var stateTable: String { get }
    /// The keys `fold` reads or writes for `event`.
    func stateKeys(for event: LedgerEvent) -> [String]
    /// The changes of `event`; `states` holds every key `stateKeys` named that has a state.
    func fold(_ event: LedgerEvent, at place: EventPlace, states: inout [String: State]) -> [ProjectionChange]
}

extension FoldingProjection {
    /// Unused: the runner folds a folding projection (`fold`) instead.
    public func changes(for event: LedgerEvent, at place: EventPlace) -> [ProjectionChange] { [] }
}

/// The webhook messages of every ledger event, as `WebhookFold` makes them: what endpoints are
/// sent and `GET /v1/events` serves. A rebuild makes the same rows (ids and bodies from the log).
public struct WebhookEventsProjection: FoldingProjection {
    public init() {}
    public let name = "webhook_events"
    /// 2: an extended renewal date is told (`subscription.extended`).
    /// 3: so is one Apple tells by RENEWAL_EXTENDED (a mass extension).
    /// 4: bodies carry their ledger event's chain `hash`, ids its first 16 hex digits.
    /// 5: bodies carry their app's `bundle_id`, and balances are kept per app.
    /// 6: each row keeps its app in a column (the feed per app).
    public let version: Int32 = 6
    public let tables = ["projection_webhook_events", "projection_webhook_state"]
    public let stateTable = "projection_webhook_state"

    public func stateKeys(for event: LedgerEvent) -> [String] { WebhookFold.keys(for: event) }

    public func fold(_ event: LedgerEvent, at place: EventPlace, states: inout [String: WebhookState]) -> [ProjectionChange] {
        WebhookFold.messages(for: event, at: place, states: &states).map { .addWebhookEvent($0) }
    }
}
