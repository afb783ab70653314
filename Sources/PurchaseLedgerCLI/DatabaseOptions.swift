import ArgumentParser
import EmbeddedPostgres
import EventStore
import Foundation
import Logging
import Postgres

/// Where the ledger's database is: `--database-url`, else `DATABASE_URL`, else the private
/// cluster in `.purchase-ledger/postgres` (started for the command, stopped after it).
package struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "libpq conninfo or URI (default: $DATABASE_URL, else a private cluster)")
    package var databaseURL: String?

    @Option(name: .customLong("data-dir"), help: "Folder of the private cluster used when no database URL is set")
    package var dataDirectory: String = ".purchase-ledger/postgres"

    package init() {}

    /// Runs `body` with a pool on the database, then closes the pool and stops a private
    /// cluster this process started.
    package func withDatabase<T: Sendable>(
        logger: Logger, _ body: @Sendable (_ conninfo: String, _ pool: ConnectionPool) async throws -> T
    ) async throws -> T {
        var cluster: EmbeddedCluster?
        let conninfo: String
        let environment = ProcessInfo.processInfo.environment
        if let url = databaseURL ?? environment["DATABASE_URL"], !url.isEmpty {
            conninfo = url
        } else if environment["INVOCATION_ID"] != nil || environment["NOTIFY_SOCKET"] != nil {
            // Run by systemd (the package's unit): a private development cluster cannot work
            // there, and a missing setting must not become a restart loop.
            throw ConfigurationFailure(message: "DATABASE_URL is required when systemd runs the ledger (set it in /etc/purchase-ledger/ledger.env)")
        } else {
            let started = try await EmbeddedCluster.start(in: URL(fileURLWithPath: dataDirectory), logger: logger)
            cluster = started
            conninfo = started.conninfo
        }
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 8, logger: logger)
        do {
            let result = try await body(conninfo, pool)
            await pool.close()
            try await cluster?.stop()
            return result
        } catch {
            await pool.close()
            try? await cluster?.stop()
            throw error
        }
    }
}

/// Runs `body` with a pool of its own on `conninfo`, and closes the pool whatever happens.
package func withPool<T: Sendable>(
    _ conninfo: String, maxConnections: Int = 2, logger: Logger, _ body: (ConnectionPool) async throws -> T
) async throws -> T {
    let pool = ConnectionPool(conninfo: conninfo, maxConnections: maxConnections, logger: logger)
    let result: Result<T, any Error>
    do {
        result = .success(try await body(pool))
    } catch {
        result = .failure(error)
    }
    await pool.close()
    return try result.get()
}
