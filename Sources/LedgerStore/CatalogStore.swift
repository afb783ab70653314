import Foundation
import Ledger
import Postgres
import Synchronization

/// The product catalogs: loading a file appends `CatalogLoaded` naming its app, and the
/// catalogs in force are the fold of the `catalog` stream (`AppCatalogs`), re-read only when the
/// stream has grown (another process may run `purchase-ledger catalog load` while the server runs).
public final class CatalogStore: Sendable {
    private let state = Mutex<(version: Int64, catalogs: AppCatalogs)>((0, AppCatalogs(legacyApp: nil)))

    public init() {}

    /// Reads the catalog stream's head: for callers that send it along with their own look-ups
    /// and then call `current(head:on:)`.
    package static let headQuery: SQL = .prepared("SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = \(Streams.catalog)")

    /// The current catalogs, checked against the stream's head on `connection`.
    package func current(on connection: Connection) throws -> AppCatalogs {
        try current(head: try connection.query(Self.headQuery)[0].decode(0), on: connection)
    }

    /// The catalogs up to version `head` of their stream (just read on `connection`): the cached
    /// ones unless the stream has grown, or a load naming no app waits for the log to name the
    /// legacy app (read again until it does: a `serve` starting names it).
    package func current(head: Int64, on connection: Connection) throws -> AppCatalogs {
        let cached = state.withLock { $0 }
        if cached.version == head, !(cached.catalogs.holdsUnnamed && cached.catalogs.legacyApp == nil) { return cached.catalogs }
        let rows = try connection.query("""
            SELECT payload FROM events WHERE stream_id = \(Streams.catalog) AND stream_version <= \(head) ORDER BY stream_version
            """)
        let loads = try rows.map { try LedgerJSON.decoder.decode(CatalogLoaded.self, from: Data($0.decode(0, as: JSONB.self).bytes)) }
        var catalogs = AppCatalogs(legacyApp: loads.contains { $0.bundleId == nil } ? try LegacyApp.read(on: connection) : nil)
        for loaded in loads { catalogs.merge(loaded) }
        state.withLock { if $0.version <= head { $0 = (head, catalogs) } }
        return catalogs
    }
}
