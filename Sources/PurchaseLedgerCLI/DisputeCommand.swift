import AppStore
import ArgumentParser
import Foundation
import Ledger
import LedgerService
import Logging

/// `purchase-ledger dispute ID`: everything the ledger recorded about a transaction, order or
/// user, in order, with Apple's own evidence and the chain's word on it.
struct DisputeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dispute",
        abstract: "The dispute timeline of a transaction, order or user id (tried in that order).",
        discussion: "--format text reads as a story to paste into a reply; json is GET /v1/timelines/...'s answer. Exit 1 when nothing concerns the id.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "An Apple transaction id, an order id or a user id")
    var id: String

    @Option(help: "text or json")
    var format: Format = .text

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.dispute")
        let id = id
        let found = try await database.withReadModels(logger: logger) { reads, _ in
            for kind in TimelineView.Kind.allCases {
                if let view = try await reads.timeline(kind, id) { return Optional(view) }
            }
            return nil
        }
        guard let view = found else {
            FileHandle.standardError.write(Data("nothing in the ledger concerns \(id) (as a transaction, order or user id)\n".utf8))
            throw ExitCode(1)
        }
        switch format {
        case .json: print(String(decoding: try LedgerJSON.encoder.encode(view), as: UTF8.self))
        case .text: print(DisputeStory.text(view), terminator: "")
        }
    }
}

/// A timeline as text for people.
enum DisputeStory {
    static func text(_ view: TimelineView) -> String {
        var out = "Dispute timeline of \(view.kind.rawValue) \(view.subject): \(view.entries.count) events\n"
        if view.verified {
            out += "Hash chain: verified from the first event to position \(view.verifiedPosition) (head \(view.headHash ?? "-")); "
                + "every event below lies within it and still matches its hash.\n\n"
        } else {
            out += "Hash chain: NOT verified for these events (verified to position \(view.verifiedPosition)); run `purchase-ledger verify`.\n\n"
        }
        for entry in view.entries {
            out += "\(entry.recordedAt)  #\(entry.position)  \(entry.summary)\n"
            guard case .object(let data) = entry.data, case .object(let apple)? = data["apple_evidence"] else { continue }
            var said = "    Apple's evidence:"
            if case .integer(let status)? = apple["status"] { said += " status \(status)," }
            if case .string(let environment)? = apple["environment"] { said += " \(environment)" }
            if case .string(let bundle)? = apple["bundle_id"] { said += ", bundle \(bundle)" }
            out += said + "\n"
            guard case .array(let listed)? = apple["entries"] else { continue }
            for case .object(let item) in listed {
                func text(_ key: String) -> String? { if case .string(let value)? = item[key] { value } else { nil } }
                var line = "      transaction \(text("transaction_id") ?? "?") (original \(text("original_transaction_id") ?? "?")): \(text("product_id") ?? "?")"
                if let purchased = text("purchase_date") { line += ", purchased \(purchased)" }
                if let expires = text("expires_date") { line += ", expires \(expires)" }
                line += text("cancellation_date").map { ", cancelled \($0)" } ?? ", not cancelled"
                out += line + "\n"
            }
        }
        return out
    }
}
