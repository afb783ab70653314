import ArgumentParser
import EventStore
import Foundation
import LedgerService
import Logging

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Recompute the event hash chain; exit 3 naming the first event that does not match.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.verify")
        let (outcome, documents) = try await database.withDatabase(logger: logger) { _, pool in
            let chain = try await ChainVerifier(pool: pool).verify(progress: TerminalProgress.reporter(label: "verified"))
            return (chain, try await DocumentVerifier(pool: pool).verify())
        }
        TerminalProgress.finish()
        try printChainOutcome(outcome)
        try printDocumentsOutcome(documents)
    }
}

/// Prints a chain verification; a broken chain exits 3 (CONTRACT.md).
func printChainOutcome(_ outcome: ChainVerifier.Outcome) throws {
    switch outcome {
    case .verified(let events, let head):
        print("chain verified: \(events) events, head \(head.hexString)")
    case .broken(let position, let reason):
        print("chain broken at position \(position): \(reason)")
        throw ExitCode(3)
    }
}

/// Prints the documents check; a missing or altered document exits 3, like a broken chain.
func printDocumentsOutcome(_ outcome: DocumentVerifier.Outcome) throws {
    switch outcome {
    case .verified(let count, let references):
        print("documents verified: \(count) documents, \(references) references")
    case .broken(let reason):
        print("documents broken: \(reason)")
        throw ExitCode(3)
    }
}

extension Array where Element == UInt8 {
    var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
