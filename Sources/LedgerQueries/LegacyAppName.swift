import LedgerStore
import Postgres
import Synchronization

/// The log's legacy app (`LegacyApp`), for rows written before read models named their app
/// (their `bundle_id` is NULL). Read once it is recorded and kept: the log never changes it.
final class LegacyAppName: Sendable {
    private let known = Mutex<String?>(nil)

    /// "" while the log records no apps (nothing this release served has run on it).
    func name(on connection: Connection) throws -> String {
        if let name = known.withLock({ $0 }) { return name }
        guard let name = try LegacyApp.read(on: connection) else { return "" }
        known.withLock { $0 = name }
        return name
    }
}
