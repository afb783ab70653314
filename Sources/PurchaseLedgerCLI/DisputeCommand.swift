import AppStore
import ArgumentParser
import Foundation
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore
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
        let (id, format, database) = (id, format, database)
        let shown = try await database.withReadModels(logger: logger) { reads, pool -> String? in
            // A person is read under the handle the log records for them, and the output shows
            // the handles it holds opened (docs/erasure.md).
            let people = try database.people(on: pool)
            let person = try await people.knownHandle(forUser: id) ?? id
            for kind in TimelineView.Kind.allCases {
                guard let view = try await reads.timeline(kind, kind == .user ? person : id) else { continue }
                switch format {
                case .json: return try await people.open(String(decoding: try LedgerJSON.encoder.encode(view), as: UTF8.self), escaping: .json) + "\n"
                case .text: return try await people.open(DisputeStory.text(view))
                }
            }
            return nil
        }
        guard let shown else {
            // Not the ledger's id: perhaps Apple's order id from the customer's receipt e-mail.
            if Self.looksLikeAppleOrderId(id), try await disputeAppleOrder(id, logger: logger) { return }
            FileHandle.standardError.write(Data("nothing in the ledger concerns \(id) (as a transaction, order, user or Apple order id)\n".utf8))
            throw ExitCode(1)
        }
        print(shown, terminator: "")
    }
}

extension DisputeCommand {
    /// Apple's order ids are ten upper-case letters and digits (e.g. MK5TTTVWJH).
    static func looksLikeAppleOrderId(_ id: String) -> Bool {
        id.count >= 8 && id.count <= 16 && id.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    /// Looks the order up with Apple (recording Apple's answer) and prints the timelines of its
    /// transactions; false when Apple knows no such order or no Server API credentials are set.
    func disputeAppleOrder(_ orderId: String, logger: Logger) async throws -> Bool {
        guard ProcessInfo.processInfo.environment["APPLE_PRIVATE_KEY"] != nil else { return false }
        let order = try await database.withAskingApple(logger: logger) { service, _ in
            try await service.lookUpAppleOrder(orderId, metadata: RequestMetadata(actor: "cli"))
        }
        guard let order else { return false }
        let ids = order.transactions.map(\.transactionId)
        let (format, database) = (format, database)
        let shown = try await database.withReadModels(logger: logger) { reads, pool in
            var views: [TimelineView] = []
            for id in ids { if let view = try await reads.timeline(.transaction, id) { views.append(view) } }
            let people = try database.people(on: pool)
            switch format {
            case .json:
                return try await people.open(String(decoding: try LedgerJSON.encoder.encode(views), as: UTF8.self), escaping: .json) + "\n"
            case .text:
                var text = "Apple order \(order.orderId) (\(order.environment)): transactions \(ids.joined(separator: ", "))\n"
                for transaction in order.transactions where transaction.userId == nil {
                    text += "  transaction \(transaction.transactionId) (\(transaction.productId)) is unknown to the ledger: Apple counted it, the ledger did not deliver it\n"
                }
                text += "\n"
                for view in views { text += DisputeStory.text(view) + "\n" }
                return try await people.open(text)
            }
        }
        print(shown, terminator: "")
        return true
    }
}

/// A timeline as text for people.
package enum DisputeStory {
    package static func text(_ view: TimelineView) -> String {
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
