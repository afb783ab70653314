import AppStoreClient
import EventStore
import Foundation
import LedgerProjections
import LedgerQueries
import LedgerService
import Logging
import Postgres
import LedgerStore

extension DatabaseOptions {
    /// Runs `body` with the read models, as `ledger_app` (docs/cli.md: read commands cannot
    /// change history), after bringing the projections up to the log's head, since no server
    /// may be running to do it. Progress shows on a terminal.
    func withReadModels<T: Sendable>(logger: Logger, _ body: @Sendable (ReadModels, ConnectionPool) async throws -> T) async throws -> T {
        try await withDatabase(logger: logger) { conninfo, _ in
            let appConninfo = try Conninfo.addingOptions("-c role=ledger_app", to: conninfo)
            return try await withPool(appConninfo, maxConnections: 2, logger: logger) { pool in
                let runner = ProjectionRunner(store: EventStore(pool: pool, logger: logger), conninfo: appConninfo, logger: logger)
                try await runner.catchUp(progress: TerminalProgress.reporter(label: "projections"))
                TerminalProgress.finish()
                let reads = ReadModels(runner: runner, timeout: .seconds(30), clock: .system).opening(documentsWith: try people(on: pool).subjects)
                return try await body(reads, pool)
            }
        }
    }
}

extension DatabaseOptions {
    /// The people on `pool`, their keys opened with `LEDGER_KEY_ENCRYPTION_KEY` when set: what a
    /// command shows opens the handles the log holds for people (docs/erasure.md).
    func people(on pool: ConnectionPool) throws -> People {
        let kek = try LedgerConfiguration.keyEncryptionKey(environment: ProcessInfo.processInfo.environment)
        return People(subjects: SubjectStore(pool: pool, keyEncryptionKey: kek))
    }
}
