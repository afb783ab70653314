import ArgumentParser
import Foundation
import Ledger
import LedgerWebhooks
import Logging
import Postgres

/// `purchase-ledger webhooks status | redeliver`: where each endpoint stands, and a range of
/// positions sent again (docs/webhooks.md).
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "The webhook endpoints: their backlog, and redelivery.", subcommands: [Status.self, Redeliver.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "A line per endpoint: name, URL, backlog, last error.",
            discussion: "The backlog counts the messages the endpoint has not acknowledged: those after its position and those outstanding (refused, waiting behind an earlier message of their user, or asked for again).")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = Logger(label: "purchase-ledger.webhooks")
            let statuses = try await database.withDatabase(logger: logger) { _, pool in
                try await pool.withConnection { try WebhookStatus.endpoints(on: $0) }
            }
            if statuses.isEmpty { print("no webhook endpoint has run on this database (LEDGER_WEBHOOKS)") }
            for status in statuses { print(Self.line(status)) }
        }

        static func line(_ status: WebhookEndpointStatus) -> String {
            var line = "\(status.name) \(status.url) backlog \(status.backlog) (outstanding \(status.outstanding)) delivered \(status.delivered) position \(status.position)"
            if let oldest = status.oldestWaitingAtMs { line += " oldest waiting since \(RevenueDay.iso8601(oldest))" }
            if let error = status.lastError {
                line += " last error: \(error)"
                if let at = status.lastErrorAtMs { line += " at \(RevenueDay.iso8601(at))" }
            } else {
                line += " last error: none"
            }
            return line
        }
    }

    struct Redeliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "redeliver",
            abstract: "Send the messages of a range of positions to an endpoint again.",
            discussion: "The same ids and bodies as the first time, so a receiver that kept its data deduplicates them. The running server holding the endpoint's lease sends them, each user's in log order; messages after the endpoint's position are not yet sent and are not queued twice.")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The endpoint's name in LEDGER_WEBHOOKS") var name: String
        @Option(name: .customLong("from"), help: "The first position (inclusive)") var from: Int64
        @Option(name: .customLong("to"), help: "The last position (inclusive; default: the endpoint's position)") var to: Int64?

        func validate() throws {
            guard from >= 0 else { throw ValidationError("--from is a position, 0 or more") }
            if let to, to < from { throw ValidationError("--to must not be before --from") }
        }

        func run() async throws {
            let logger = Logger(label: "purchase-ledger.webhooks")
            let (name, from, to) = (name, from, to)
            do {
                let queued = try await database.withDatabase(logger: logger) { _, pool in
                    try await pool.withConnection { try WebhookRedelivery.queue(endpoint: name, from: from, to: to, on: $0) }
                }
                print("\(queued) messages queued for redelivery to \(name); the server holding its lease sends them")
            } catch let error as WebhookRedelivery.UnknownEndpoint {
                throw ValidationError(error.description)
            }
        }
    }
}
