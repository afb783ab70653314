import AppStore
import EventStore
import Foundation
import Ledger
import LedgerProjections
import LedgerStore
import Postgres
import Primitives

/// `GET /v1/timelines/...` and `purchase-ledger dispute`.
public struct TimelineView: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case transaction, order, user
    }

    public struct Entry: Sendable, Hashable {
        public var position: Int64
        /// ISO 8601, UTC.
        public var recordedAt: String
        public var type: String
        public var stream: String
        public var summary: String
        /// The payload as recorded; `apple_evidence` added for Apple's answers (the entries of
        /// the verified receipt about this timeline's transactions). Null, with no summary,
        /// for an entry the caller did not ask to be shown in full (`TimelineShown`).
        public var data: JSONValue
        /// The payload's `transaction_id` and `original_transaction_id`, for every entry,
        /// shown in full or not (the database reads them out of the payload).
        public var transactionId: String? = nil
        public var originalTransactionId: String? = nil
    }

    public var kind: Kind
    public var subject: String
    public var entries: [Entry]
    /// Every entry lies in the part of the chain verified from the first event, and each
    /// entry's row still hashes to its stored hash.
    public var verified: Bool
    /// The verified chain head's hash, hex; nil when nothing is verified yet.
    public var headHash: String?
    public var verifiedPosition: Int64
}

/// The entries of a timeline a caller shows in full, by index, given every entry's position and
/// type in log order: the others keep their position, time, type, stream and payload, without a
/// summary, Apple's evidence or the payload decoded as an event (`ReadModels.timeline`).
public typealias TimelineShown = @Sendable (_ positions: [Int64], _ types: [String]) -> Set<Int>

extension ReadModels {
    /// Nil when nothing in the ledger concerns `id` as that kind of subject. `shown` (nil: all)
    /// names the entries worth their summary and Apple's evidence: the console's look-up shows
    /// 100 of a user's hundreds, and decoding, summing up and citing the rest was most of its
    /// time (docs/benchmarks.md). The chain's verdict covers every entry either way.
    public func timeline(_ kind: TimelineView.Kind, _ id: String, shown: TimelineShown? = nil) async throws -> TimelineView? {
        try await mappingDatabaseErrors {
            // Named as the projection names what it indexes: a sealed person is keyed by subject.
            let subject = switch kind {
            case .transaction: TimelineProjection.Subject.transaction(id)
            case .order: TimelineProjection.Subject.order(id)
            case .user: TimelineProjection.Subject.user(id)
            }
            let (rows, matching, checkpoint) = try await withConsistentConnection { connection in
                let rows = try LedgerReads.timelineEvents(of: subject, on: connection)
                let matching = try rows.allSatisfy { try ChainVerifier.rowMatches($0, position: 0, first: LedgerReads.timelineCanonicalColumn) }
                return (rows, matching, try ChainWatch.state(on: connection))
            }
            guard !rows.isEmpty else { return nil }
            let positions: [Int64] = try rows.map { try $0.decode(0) }
            let types: [String] = try rows.map { try $0.decode(2) }
            let full = shown.map { $0(positions, types) }
            var entries: [TimelineView.Entry] = []
            entries.reserveCapacity(rows.count)
            // Which transactions the timeline speaks of (Apple's evidence cites only those), and
            // Apple's answers among the entries shown in full.
            var transactions = Set(kind == .transaction ? [id] : [])
            var answers: [(index: Int, answer: AppleResponded)] = []
            for (index, row) in rows.enumerated() {
                let type = types[index]
                let transactionId: String? = try row.decode(LedgerReads.timelineTransactionColumn)
                let originalTransactionId: String? = try row.decode(LedgerReads.timelineOriginalTransactionColumn)
                Self.noteTransactions(of: type, transactionId: transactionId, originalTransactionId: originalTransactionId, in: &transactions)
                var summary = "", data = JSONValue.null
                // Only entries shown are parsed: the console shows 100 of a user's hundreds, and
                // parsing the rest was a tenth of its look-up's time (docs/benchmarks.md).
                if full?.contains(index) ?? true {
                    let payload = try row.decode(LedgerReads.timelinePayloadColumn, as: JSONB.self).bytes
                    // Read once without the decoder when it can be (JSONValue+Parsing,
                    // PayloadValueDecoder): through JSONDecoder, twice, the payload was most of a
                    // long timeline's time.
                    let value = JSONValue.parsedQuickly(payload)
                    data = try value ?? LedgerJSON.decoder.decode(JSONValue.self, from: Data(payload))
                    let metadata = try? LedgerJSON.decode(RequestMetadata.self, from: row.decode(LedgerReads.timelineMetadataColumn, as: JSONB.self).bytes)
                    let event = try value.flatMap { LedgerEvent.decodedQuickly(type: type, value: $0) } ?? LedgerEvent(type: type, bytes: payload)
                    if case .appleResponded(let answer) = event { answers.append((index, answer)) }
                    summary = TimelineSummary.line(for: event, actor: metadata?.actor)
                }
                entries.append(TimelineView.Entry(
                    position: positions[index], recordedAt: RevenueDay.iso8601(try row.decode(1)), type: type, stream: try row.decode(3),
                    summary: summary, data: data, transactionId: transactionId, originalTransactionId: originalTransactionId))
            }
            entries = try await addingAppleEvidence(to: entries, answers: answers, transactions: transactions)
            // The checkpoint may trail the newest entries by a moment: move it to them (the
            // runner may be moving it too, so the state is read again after each step).
            let chain = runner.chain
            var state = checkpoint
            while state.broken == nil, state.position < (positions.last ?? 0) {
                let before = state.position
                let verified = try await chain.advance()
                state = try await chain.state()
                if verified == 0, state.position == before { break }
            }
            return TimelineView(
                kind: kind, subject: id, entries: entries, verified: matching && (positions.last ?? 0) <= state.position,
                headHash: state.position > 0 ? Hex.encode(state.hash) : nil,
                verifiedPosition: state.position)
        }
    }

    /// The transactions an event of `type` speaks of, from its payload's fields as the events
    /// name them (`transaction_id`, `original_transaction_id`), so entries not shown in full
    /// need no parsing to say which receipt entries are this timeline's.
    static func noteTransactions(of type: String, transactionId: String?, originalTransactionId: String?, in transactions: inout Set<String>) {
        switch type {
        case PurchaseDelivered.eventType, PurchaseRefunded.eventType, SubscriptionRenewalSeen.eventType:
            for id in [transactionId, originalTransactionId] {
                if let id { transactions.insert(id) }
            }
        case ReceiptSubmitted.eventType:
            if let id = transactionId, !id.isEmpty { transactions.insert(id) }
        default: break
        }
    }

    /// Adds to each of Apple's answers the receipt entries about the timeline's transactions:
    /// dates of purchase, expiry and cancellation as Apple stated them, from the stored body.
    private func addingAppleEvidence(
        to entries: [TimelineView.Entry], answers: [(index: Int, answer: AppleResponded)], transactions: Set<String>
    ) async throws -> [TimelineView.Entry] {
        // Every body Apple sent for the entries shown, in one query.
        let bodies = try await DocumentStore(pool: pool, subjects: documentKeys).get(answers.compactMap(\.answer.documentSha256))
        var result = entries
        for (index, answer) in answers {
            guard let name = answer.documentSha256, let body = bodies[name], let response = try? VerifyReceiptResponse(jsonBytes: Data(body)),
                  case .object(var data) = result[index].data
            else { continue }
            let evidence = Evidence(response: response, environmentFallback: answer.endpoint == "sandbox" ? "Sandbox" : "Production")
            let matching = evidence.entries.filter { transactions.contains($0.transactionId) || transactions.contains($0.originalTransactionId) }
            let status: JSONValue = answer.status.map { JSONValue.integer(Int64($0)) } ?? .null
            let bundle: JSONValue = evidence.bundleId.map(JSONValue.string) ?? .null
            let listed: [JSONValue] = matching.map(Self.evidenceJSON)
            let apple: [String: JSONValue] = [
                "status": status, "environment": .string(evidence.environment), "bundle_id": bundle, "entries": .array(listed),
            ]
            data["apple_evidence"] = .object(apple)
            result[index].data = .object(data)
        }
        return result
    }

    static func evidenceJSON(_ entry: EvidenceEntry) -> JSONValue {
        func date(_ ms: Int64?) -> JSONValue { ms.map { JSONValue.string(RevenueDay.iso8601($0)) } ?? .null }
        let fields: [String: JSONValue] = [
            "transaction_id": .string(entry.transactionId), "original_transaction_id": .string(entry.originalTransactionId),
            "product_id": .string(entry.productId), "quantity": .integer(entry.quantity),
            "purchase_date": date(entry.purchaseDateMs), "expires_date": date(entry.expiresDateMs),
            "cancellation_date": date(entry.cancellationDateMs),
        ]
        return .object(fields)
    }
}

extension TimelineView: Encodable {
    /// docs/http-api.md's `{"subject", "entries": [{"position", "recorded_at", "type", "stream",
    /// "summary", "data"}], "chain": {"verified", "head_hash"}}`, the one definition of the body.
    public var jsonValue: JSONValue {
        let entries: [JSONValue] = entries.map { entry in
            .object([
                "position": .integer(entry.position), "recorded_at": .string(entry.recordedAt), "type": .string(entry.type),
                "stream": .string(entry.stream), "summary": .string(entry.summary), "data": entry.data,
            ])
        }
        let chain: JSONValue = .object(["verified": .bool(verified), "head_hash": headHash.map(JSONValue.string) ?? .null])
        return .object(["subject": .string(subject), "entries": .array(entries), "chain": chain])
    }

    /// The body as `LedgerJSON.encoder` writes it (a test holds them equal), written by
    /// `JSONValue.sortedCompactJSON`: through the encoder's generic containers a user's 400
    /// entries took 20 ms, half of the answer.
    public var jsonBytes: [UInt8] { jsonValue.sortedCompactJSON() }

    public func encode(to encoder: any Encoder) throws { try jsonValue.encode(to: encoder) }
}

extension TimelineView {
    /// The apps its entries name: each entry's `bundle_id`, and that of the Apple evidence it
    /// carries; an entry naming none was recorded before events named their app (`legacyApp`'s)
    /// or names no app at all (Apple's answers, a submission's resolution), and counts for none.
    public func appsNamed(legacyApp: String?) -> Set<String> {
        var apps: Set<String> = []
        for entry in entries {
            guard case .object(let data) = entry.data else { continue }
            if let app = data["bundle_id"]?.stringValue { apps.insert(app) }
            if case .object(let evidence)? = data["apple_evidence"], let app = evidence["bundle_id"]?.stringValue { apps.insert(app) }
        }
        if apps.isEmpty, let legacyApp { apps.insert(legacyApp) }
        return apps
    }
}
