import Foundation
import Ledger
import LedgerStore
import Postgres
import Primitives

/// A page of `GET /v1/events`: the webhook messages after a position, each with its `id`, in
/// log order, never splitting one ledger event's messages.
public struct EventFeedPage: Sendable {
    /// Each message's JSON object: its body with `id` first.
    public var events: [Data]
    /// The position of the page's last message, or the position asked after when it is empty.
    public var next: Int64

    /// `{"events":[...],"next":N}`, the stored bytes of each message kept as they are.
    public var json: Data {
        var out = Data(#"{"events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(event)
        }
        out.append(contentsOf: Array(#"],"next":\#(next)}"#.utf8))
        return out
    }
}

/// A feed consumer's resume point is not in the log as it stands: the event at its position has
/// another hash, or the log ends before it. A restore to an earlier point happened; the consumer
/// resumes from `head` (and compares what it holds past the point it finds in common).
public struct HistoryDiverged: Error, Sendable {
    public var position: Int64
    public var head: Int64
    public var headHash: [UInt8]
    /// Whether the log ends before `position` (else another event sits there).
    public var truncated: Bool
}

/// The one app a feed is read for (a token limited to it): messages naming another app are left
/// out, and those naming none were recorded before events named their app, so are the legacy app's.
public struct FeedApp: Sendable, Hashable {
    public var bundleId: String
    public var isLegacy: Bool
    public init(bundleId: String, isLegacy: Bool) {
        self.bundleId = bundleId
        self.isLegacy = isLegacy
    }
}

extension ReadModels {
    public static let feedLimit = 1_000
    public static let feedWaitLimit: Duration = .seconds(30)

    /// The messages after `position`, at most `limit` ledger events' worth and all of the last
    /// one's. With `wait`, when there are none yet the call holds until the projection runner
    /// applies more of the log (woken by it, not by a timer) and reads again, until `wait` has
    /// passed; a consumer that keeps `next` never misses a message. With `afterHash` (16 to 64
    /// lower-case hex digits, the start of the chain hash of the event at `position`, as the
    /// consumer last saw it), the page is served only while the log still holds that event:
    /// else `HistoryDiverged`.
    ///
    /// `app`: that app's messages alone (`next` is then the last of them; the others are passed
    /// over on every read).
    public func events(after position: Int64, afterHash: String? = nil, limit: Int, wait: Duration, app: FeedApp? = nil) async throws -> EventFeedPage {
        let deadline = ContinuousClock.now + wait
        while true {
            let seen = runner.appliedPosition
            // Like every read: the projections hold the log as it stood when the read began, so
            // a caller that just wrote reads its own change.
            let page = try await mappingDatabaseErrors {
                try await withConsistentConnection { connection in
                    if let afterHash, position > 0 { try Self.checkHistory(position: position, hashPrefix: afterHash, on: connection) }
                    return try Self.eventPage(after: position, limit: limit, app: app, on: connection)
                }
            }
            let left = deadline - ContinuousClock.now
            if !page.events.isEmpty || left <= .zero { return page }
            // Nothing yet: wait for the runner to apply past what it had when this read began.
            _ = await runner.waitForProgress(to: max(seen, position) + 1, timeout: left)
            try Task.checkCancellation()
        }
    }

    static func checkHistory(position: Int64, hashPrefix: String, on connection: Connection) throws {
        let place = try LedgerReads.chainPlace(at: position, on: connection)
        if let hash = place.hash, Hex.encode(hash).hasPrefix(hashPrefix) { return }
        throw HistoryDiverged(position: position, head: place.head, headHash: place.headHash, truncated: place.hash == nil)
    }

    static func eventPage(after position: Int64, limit: Int, app: FeedApp?, on connection: Connection) throws -> EventFeedPage {
        let rows: PostgresRows
        if let app {
            // A message keeps the app its body names (`data.bundle_id`) in a column of its own.
            rows = try connection.query(.prepared("""
                WITH app_messages AS (
                    SELECT position, sequence, body, hash_prefix FROM projection_webhook_events
                    WHERE position > \(position) AND coalesce(bundle_id = \(app.bundleId), \(app.isLegacy))
                ), page AS (
                    SELECT position, sequence, body, hash_prefix FROM app_messages ORDER BY position, sequence LIMIT \(Int64(limit))
                )
                SELECT position, sequence, body, hash_prefix FROM page
                UNION
                SELECT m.position, m.sequence, m.body, m.hash_prefix FROM app_messages m WHERE m.position = (SELECT max(position) FROM page)
                ORDER BY 1, 2
                """))
        } else {
            rows = try connection.query(.prepared("""
                WITH page AS (
                    SELECT position, sequence, body, hash_prefix FROM projection_webhook_events
                    WHERE position > \(position) ORDER BY position, sequence LIMIT \(Int64(limit))
                )
                SELECT position, sequence, body, hash_prefix FROM page
                UNION
                SELECT m.position, m.sequence, m.body, m.hash_prefix FROM projection_webhook_events m WHERE m.position = (SELECT max(position) FROM page)
                ORDER BY 1, 2
                """))
        }
        var events: [Data] = []
        var next = position
        for row in rows {
            let (at, sequence, body, prefix): (Int64, Int32, String, String) = (try row.decode(0), try row.decode(1), try row.decode(2), try row.decode(3))
            // The stored body is an object; its id goes first, the rest byte for byte.
            var object = Data(#"{"id":"\#(WebhookEvent.id(position: at, hashPrefix: prefix, sequence: sequence))","#.utf8)
            object.append(contentsOf: body.utf8.dropFirst())
            events.append(object)
            next = at
        }
        return EventFeedPage(events: events, next: next)
    }
}
