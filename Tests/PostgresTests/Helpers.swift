import Foundation
import Logging
import Postgres
import Synchronization
import TestSupport

/// Counts how many bodies run at once and remembers the highest count.
final class ConcurrencyGauge: Sendable {
    private let state = Mutex((current: 0, peak: 0))

    func enter() { state.withLock { $0.current += 1; $0.peak = max($0.peak, $0.current) } }
    func leave() { state.withLock { $0.current -= 1 } }
    var peak: Int { state.withLock { $0.peak } }
}

struct ExpectedFailure: Error, Equatable {}

extension ConnectionPool {
    /// Runs one statement and decodes the first column of the first row.
    func scalar<T: PostgresDecodable & Sendable>(_ sql: SQL, as type: T.Type = T.self) async throws -> T? {
        try await withConnection { connection in try connection.query(sql).scalar(T.self) }
    }
}
