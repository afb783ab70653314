import Foundation
import Ledger
import Postgres

/// The app that events recorded before several apps belong to, as the log names it
/// (docs/several-apps.md): the first `AppsConfigured`'s `legacy_bundle_id`, else, in a log that
/// began with several apps, its first app (an event without an app there was written by an
/// older release serving beside this one, for the app it was configured with).
public enum LegacyApp {
    /// Nil when the log records no apps yet: nothing this release served has run on it.
    public static func read(on connection: Connection) throws -> String? {
        guard let row = try connection.query(.prepared("""
            SELECT payload FROM events WHERE stream_id = \(Streams.apps) AND stream_version = 1
            """)).first else { return nil }
        let first = try LedgerJSON.decoder.decode(AppsConfigured.self, from: Data(row.decode(0, as: JSONB.self).bytes))
        return first.legacyBundleId ?? first.apps.first?.bundleId
    }
}

extension LedgerReads {
    /// `LegacyApp.read`, on a pooled connection, kept once known.
    public func legacyApp() async throws -> String? {
        let legacy = legacy
        if let known = legacy.cached { return known }
        return try await pool.withConnection { try legacy.read(on: $0) }
    }
}

extension LedgerReads {
    /// The streams and keys of `bundleId` (`AppStreams`), as the log names its legacy app.
    public func streams(of bundleId: String) async throws -> AppStreams {
        AppStreams(bundleId: bundleId, legacyApp: try await legacyApp())
    }
}
