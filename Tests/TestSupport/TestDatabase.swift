import Foundation
import Logging
import Postgres

/// The PostgreSQL server the tests use, from `DATABASE_URL` (set by `Tools/test`).
public enum TestDatabase {
    /// Thrown when `DATABASE_URL` is missing: tests that need PostgreSQL fail, never skip.
    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String {
            "DATABASE_URL is not set: run the tests with Tools/test, which starts a throwaway PostgreSQL"
        }
    }

    /// The server's conninfo (or URI), from `DATABASE_URL`.
    public static var adminConninfo: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
                throw NotConfigured()
            }
            return url
        }
    }

    /// A logger for tests: warnings and above, to stderr.
    public static let logger: Logger = {
        var logger = Logger(label: "tests.postgres")
        logger.logLevel = .warning
        return logger
    }()

    /// Runs `body` with a fresh schema that is dropped afterwards (tests run in parallel in one
    /// process, so each gets its own). `conninfo` is the admin conninfo with the schema as
    /// `search_path`; `pool` is a small pool over it, closed after `body`.
    ///
    /// Throws ``NotConfigured`` (a test failure) when `DATABASE_URL` is missing.
    public static func withSchema<T>(
        _ body: (_ conninfo: String, _ pool: ConnectionPool) async throws -> T
    ) async throws -> T {
        let admin = try adminConninfo
        let schema = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let adminPool = ConnectionPool(conninfo: admin, maxConnections: 1, logger: logger)
        try await adminPool.withConnection { connection in
            try connection.execute("CREATE SCHEMA \(identifier: schema)")
        }
        // search_path is a plain identifier here (test_<hex>), so it needs no quoting in options.
        let conninfo = try Conninfo.addingOptions("-c search_path=\(schema)", to: admin)
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 4, logger: logger)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(conninfo, pool))
        } catch {
            result = .failure(error)
        }
        await pool.close()
        do {
            try await adminPool.withConnection { connection in
                try connection.execute("DROP SCHEMA \(identifier: schema) CASCADE")
            }
        } catch {
            // Dropping can fail only if the server went away; the cluster is thrown away anyway.
            logger.warning("could not drop test schema \(schema): \(error)")
        }
        await adminPool.close()
        return try result.get()
    }

    /// Runs `body` on a connection of its own to the admin conninfo (no test schema).
    public static func withAdmin<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let pool = ConnectionPool(conninfo: try adminConninfo, maxConnections: 1, logger: logger)
        let result: Result<T, any Error>
        do {
            result = .success(try await pool.withConnection(body))
        } catch {
            result = .failure(error)
        }
        await pool.close()
        return try result.get()
    }
}
