import ArgumentParser
import EventStore
import Foundation
import LedgerService
import LedgerStore
import Logging
import Postgres
import Primitives

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Recompute the event hash chain; exit 3 naming the first event that does not match.",
        discussion: "With --digest POSITION:HASH (as printed by `digest`), also prove that the log still extends that published head.")

    @OptionGroup var database: DatabaseOptions

    @Option(name: .customLong("digest"), help: "A published chain head, POSITION:HASH, the log must still extend")
    var digest: String?

    func validate() throws {
        if let digest, ChainDigest(parsing: digest) == nil {
            throw ValidationError("--digest must be POSITION:HASH, the hash as 64 hex digits (what `purchase-ledger digest` prints)")
        }
    }

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.verify")
        let published = digest.flatMap(ChainDigest.init(parsing:))
        let (outcome, documents, digestCheck) = try await database.withDatabase(logger: logger) { conninfo, _ in
            // A read command: as ledger_app, which can read the log but never change it (docs/cli.md).
            try await withPool(try Conninfo.addingOptions("-c role=ledger_app", to: conninfo), logger: logger) { pool in
                let verifier = ChainVerifier(pool: pool)
                let chain = try await verifier.verify(progress: TerminalProgress.reporter(label: "verified"))
                var digestCheck: ChainVerifier.DigestCheck?
                if let published, case .verified = chain { digestCheck = try await verifier.check(published) }
                return (chain, try await DocumentVerifier(pool: pool).verify(), digestCheck)
            }
        }
        TerminalProgress.finish()
        try printChainOutcome(outcome)
        if let published, let digestCheck { try printDigestCheck(digestCheck, of: published) }
        try printDocumentsOutcome(documents)
    }
}

/// Prints what a published digest says: another event at its position exits 3 (history was
/// rewritten), a log that ends before it exits 4 (a restore lost events; docs/cli.md).
func printDigestCheck(_ check: ChainVerifier.DigestCheck, of digest: ChainDigest) throws {
    switch check {
    case .extends:
        print("digest verified: the log extends \(digest)")
    case .truncated(let head):
        print("digest broken: the log ends at position \(head), before the published position \(digest.position)")
        throw ExitCode(4)
    case .differs(let found):
        print("digest broken: the event at position \(digest.position) has hash \(found.hexString), not the published \(digest.hash.hexString)")
        throw ExitCode(3)
    }
}

/// Prints a chain verification; a broken chain exits 3 (docs/cli.md).
package func printChainOutcome(_ outcome: ChainVerifier.Outcome) throws {
    switch outcome {
    case .verified(let events, let head):
        print("chain verified: \(events) events, head \(head.hexString)")
    case .broken(let position, let reason):
        print("chain broken at position \(position): \(reason)")
        throw ExitCode(3)
    }
}

/// Prints the documents check; a missing or altered document exits 3, like a broken chain.
package func printDocumentsOutcome(_ outcome: DocumentVerifier.Outcome) throws {
    switch outcome {
    case .verified(let count, let references):
        print("documents verified: \(count) documents, \(references) references")
    case .broken(let reason):
        print("documents broken: \(reason)")
        throw ExitCode(3)
    }
}

extension Array where Element == UInt8 {
    var hexString: String { Hex.encode(self) }
}
