import ArgumentParser
import Foundation
import LedgerService
import LedgerStore
import Logging

/// `purchase-ledger erasure begin`: from now on the ledger seals the people it meets
/// (docs/erasure.md). For a log an earlier release recorded, once no server of that release runs.
/// `purchase-ledger erasure reapply`: the erasures an erasure journal lists, done again after a
/// restore.
struct ErasureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erasure", abstract: "Sealing people, so they can be erased.", subcommands: [Begin.self, Reapply.self])

    struct Begin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "begin",
            abstract: "Seal the people the ledger meets from now on (a log an earlier release recorded; once every server runs this one).",
            discussion: """
                A log this release begins is sealed from its first event. One an earlier release recorded keeps \
                recording ids as they are until this is run: a server of that release, serving beside this one during \
                an upgrade, reads people by their ids and would not find one sealed. Run it once the last such server \
                is stopped. Servers of this release begin sealing within 5 seconds. Running it again changes nothing.
                """)

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = Logger(label: "purchase-ledger.erasure")
            let began = try await database.withPurchaseService(logger: logger) { try await $0.beginErasure(metadata: RequestMetadata(actor: "cli")) }
            print(began == nil ? "erasure had begun already: people are sealed" : "erasure begins: the people the ledger meets from now on are sealed")
        }
    }

    struct Reapply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reapply",
            abstract: "Do again the erasures erasure journals list that a restore of the database undid.",
            discussion: """
                A point-in-time restore to before an erasure brings the person's key back and loses its UserErased. \
                Each journal (LEDGER_ERASURE_JOURNAL of a server that erased, by default this environment's) lists \
                every erasure by subject; for each, the key is destroyed again and a UserErased recorded again when \
                the log lacks it. serve does this with its own journal when it starts. Running it again changes nothing.
                """)

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "Erasure journals to apply (default: LEDGER_ERASURE_JOURNAL).")
        var journals: [String] = []

        func run() async throws {
            let logger = Logger(label: "purchase-ledger.erasure")
            var paths = journals
            if paths.isEmpty, let set = ProcessInfo.processInfo.environment["LEDGER_ERASURE_JOURNAL"], !set.isEmpty { paths = [set] }
            guard !paths.isEmpty else { throw ValidationError("name an erasure journal, or set LEDGER_ERASURE_JOURNAL") }
            for path in paths where !FileManager.default.fileExists(atPath: path) {
                throw ValidationError("the erasure journal \(path) does not exist")
            }
            let given = paths
            let done = try await database.withPurchaseService(logger: logger) { service in
                var all = PurchaseService.ReappliedErasures()
                for path in given {
                    let one = try await service.reapply(ErasureJournal(path: path), metadata: RequestMetadata(actor: "cli:erasure-journal"))
                    all.listed += one.listed
                    all.keysDestroyed += one.keysDestroyed
                    all.recorded += one.recorded
                }
                return all
            }
            print("erasures listed: \(done.listed); keys destroyed again: \(done.keysDestroyed); UserErased recorded again: \(done.recorded)")
        }
    }
}
