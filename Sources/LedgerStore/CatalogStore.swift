import Foundation
import Ledger
import Postgres
import Synchronization

/// The product catalog: loading a file appends `CatalogLoaded`, and the catalog in force is the
/// fold of the `catalog` stream, re-read only when the stream has grown (another process may
/// run `purchase-ledger catalog load` while the server runs).
public final class CatalogStore: Sendable {
    private let state = Mutex<(version: Int64, catalog: Catalog)>((0, Catalog()))

    public init() {}

    /// Reads the catalog stream's head: for callers that send it along with their own look-ups
    /// and then call `current(head:on:)`.
    package static let headQuery: SQL = .prepared("SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = \(Streams.catalog)")

    /// The current catalog, checked against the stream's head on `connection`.
    package func current(on connection: Connection) throws -> Catalog {
        try current(head: try connection.query(Self.headQuery)[0].decode(0), on: connection)
    }

    /// The catalog up to version `head` of its stream (just read on `connection`): the cached
    /// one unless the stream has grown.
    package func current(head: Int64, on connection: Connection) throws -> Catalog {
        let cached = state.withLock { $0 }
        if cached.version == head { return cached.catalog }
        var catalog = Catalog()
        for row in try connection.query("""
            SELECT payload FROM events WHERE stream_id = \(Streams.catalog) AND stream_version <= \(head) ORDER BY stream_version
            """) {
            catalog.merge(try LedgerJSON.decoder.decode(CatalogLoaded.self, from: Data(row.decode(0, as: JSONB.self).bytes)))
        }
        state.withLock { if $0.version < head { $0 = (head, catalog) } }
        return catalog
    }
}
