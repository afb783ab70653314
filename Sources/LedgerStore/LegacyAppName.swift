import Postgres
import Synchronization

/// The log's legacy app (`LegacyApp`), read once the log records it and kept: the log never
/// changes it. For rows written before read models named their app, and for the streams and
/// keys that kept their names from before several apps.
public final class LegacyAppName: Sendable {
    private let known = Mutex<String?>(nil)

    public init() {}

    /// Nil while the log records no apps (nothing this release served has run on it).
    public func read(on connection: Connection) throws -> String? {
        if let name = known.withLock({ $0 }) { return name }
        guard let name = try LegacyApp.read(on: connection) else { return nil }
        known.withLock { $0 = name }
        return name
    }

    /// The name when already read; nil otherwise (no database asked).
    public var cached: String? { known.withLock { $0 } }

    /// For reads: "" while the log records no apps.
    public func name(on connection: Connection) throws -> String { try read(on: connection) ?? "" }
}
