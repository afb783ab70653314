import ArgumentParser
import EventStore
import Logging
import Postgres

/// `purchase-ledger digest`: the chain head as `POSITION:HASH`, to publish. The chain is
/// verified first, so a head is never published for a log that is already broken (exit 3).
struct DigestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "Print the verified chain head as POSITION:HASH, to publish; `verify --digest` later proves the log extends it.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.digest")
        let outcome = try await database.withDatabase(logger: logger) { conninfo, _ in
            // A read command: as ledger_app, which can read the log but never change it (docs/cli.md).
            try await withPool(try Conninfo.addingOptions("-c role=ledger_app", to: conninfo), logger: logger) { pool in
                try await ChainVerifier(pool: pool).verify(progress: TerminalProgress.reporter(label: "verified"))
            }
        }
        TerminalProgress.finish()
        switch outcome {
        case .verified(let events, let head):
            print(ChainDigest(position: events, hash: head))
        case .broken(let position, let reason):
            print("chain broken at position \(position): \(reason)")
            throw ExitCode(3)
        }
    }
}
