import ArgumentParser
import Foundation
import LedgerService
import LedgerStore
import Logging

/// `purchase-ledger erasure begin`: from now on the ledger seals the people it meets
/// (docs/erasure.md). For a log an earlier release recorded, once no server of that release runs.
struct ErasureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erasure", abstract: "Sealing people, so they can be erased.", subcommands: [Begin.self])

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
}
