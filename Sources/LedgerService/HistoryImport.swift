import Crypto
import EventStore
import Foundation
import Ledger
import Logging
import Postgres

/// `purchase-ledger import FILE`: history from an earlier system (JSON lines, `ImportLine`),
/// decided by the same rules as live receipts (without orders) and appended through COPY in
/// batches. Each line becomes a submission named after the line's sha256, so a line imported
/// once is skipped after: running the import again appends nothing. A bad line is reported by
/// number and nothing of it is kept; the others go in.
public struct HistoryImport: Sendable {
    public struct LineError: Sendable, Hashable {
        public var line: Int
        public var message: String
    }

    public struct Summary: Sendable {
        public var lines = 0
        /// Lines whose events were appended now.
        /// Lines recorded now (a line whose purchases were already delivered is recorded too,
        /// as a resubmission, and delivers nothing twice).
        public var imported = 0
        /// Lines imported before (or blank).
        public var skipped = 0
        public var events = 0
        public var errors: [LineError] = []
    }

    let pool: ConnectionPool
    let configuration: LedgerConfiguration
    let logger: Logger
    let batchLines: Int

    public init(pool: ConnectionPool, configuration: LedgerConfiguration, batchLines: Int = 200, logger: Logger) {
        self.pool = pool
        self.configuration = configuration
        self.batchLines = batchLines
        self.logger = logger
    }

    /// Imports every line of `file`; `progress` gets (lines done, lines in the file).
    public func run(file: URL, progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Summary {
        let data = try Data(contentsOf: file, options: .mappedIfSafe)
        let total = Int64(data.reduce(into: 0) { count, byte in if byte == UInt8(ascii: "\n") { count += 1 } } + (data.last == UInt8(ascii: "\n") ? 0 : 1))
        var summary = Summary()
        var batch = Batch()
        var lineNumber = 0
        var start = data.startIndex
        let log = LedgerLog(store: EventStore(pool: pool, logger: logger))
        let catalog = CatalogStore(log: log)
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            lineNumber += 1
            let bytes = Array(data[start..<end])
            start = end < data.endIndex ? data.index(after: end) : end
            summary.lines += 1
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                summary.skipped += 1
                continue
            }
            do {
                let line = try ImportLine.parse(bytes, bundleId: configuration.bundleId)
                var decided = try await decide(line, bytes: bytes, number: lineNumber, catalog: catalog, pending: batch)
                if case .conflicts = decided {
                    // An earlier line of this batch touches the same purchases: commit it, then
                    // decide this line against what it recorded.
                    try await flush(&batch, into: &summary, log: log)
                    decided = try await decide(line, bytes: bytes, number: lineNumber, catalog: catalog, pending: batch)
                }
                switch decided {
                case .skip: summary.skipped += 1
                case .append(let work): batch.add(work)
                case .conflicts: throw LedgerServiceError(.invalidRequest, "the line conflicts with itself")
                }
            } catch let error as LedgerServiceError where error.code == .invalidRequest {
                summary.errors.append(LineError(line: lineNumber, message: error.message))
            }
            if batch.lines.count >= batchLines { try await flush(&batch, into: &summary, log: log) }
            progress?(Int64(lineNumber), total)
        }
        try await flush(&batch, into: &summary, log: log)
        return summary
    }

    private enum Decided {
        case skip
        case append(LineWork)
        case conflicts
    }

    /// A decided line: its document and appends.
    struct LineWork {
        var number: Int
        var document: [UInt8]
        var appends: [LedgerAppend]
    }

    /// The lines waiting for the next COPY, and the streams their appends expect a version of.
    struct Batch {
        var lines: [LineWork] = []
        var streams: Set<String> = []

        mutating func add(_ work: LineWork) {
            lines.append(work)
            streams.formUnion(work.appends.map(\.stream))
        }
    }

    private func decide(
        _ line: ImportLine, bytes: [UInt8], number: Int, catalog: CatalogStore, pending: Batch
    ) async throws -> Decided {
        let name = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let submission = Submission(submissionId: "import-" + name.prefix(32), userId: line.userId, transactionId: line.transactionId)
        let configuration = configuration
        let found: Decision? = try await mappingDatabaseErrors {
            try await pool.withConnection { connection in
                let stream = Streams.submission(submission.submissionId)
                let seen: Int64 = try connection.query("SELECT count(*) FROM events WHERE stream_id = \(stream)")[0].decode(0)
                if seen > 0 { return nil }
                let context = try ContextLoader(connection: connection).load(
                    evidence: line.evidence, userId: line.userId, namedOrderId: nil, catalog: try catalog.current(on: connection),
                    configuration: configuration)
                return PurchaseDecider.decide(submission, evidence: line.evidence, context: context, requireOrders: false)
            }
        }
        guard let decision = found else { return .skip }
        if case .rejected(let code, let message) = decision.outcome {
            throw LedgerServiceError(.invalidRequest, "\(code.rawValue): \(message)")
        }
        let submitted = ReceiptSubmitted(
            submissionId: submission.submissionId, userId: line.userId, orderId: nil, transactionId: nil, kind: .imported,
            documentSha256: name, submittedAtMs: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
        let appends = [LedgerAppend(
            stream: Streams.submission(submission.submissionId), expectation: .noStream,
            events: [.receiptSubmitted(submitted)] + decision.closingEvents(for: submission))] + decision.appends
        // Streams appended with `.any` (a subscription's observations) may repeat across lines.
        let claimed = appends.filter { $0.expectation != .any }.map(\.stream)
        if claimed.contains(where: pending.streams.contains) { return .conflicts }
        return .append(LineWork(number: number, document: bytes, appends: appends))
    }

    /// Stores the batch's documents and COPYs its events in one transaction. When the COPY
    /// fails (live traffic reached one of its streams first), each line is retried alone, and a
    /// line that still fails is reported.
    private func flush(_ batch: inout Batch, into summary: inout Summary, log: LedgerLog) async throws {
        let lines = batch.lines
        batch = Batch()
        guard !lines.isEmpty else { return }
        do {
            summary.events += try await write(lines, log: log)
            summary.imported += lines.count
        } catch where lines.count > 1 {
            logger.notice("an import batch conflicted with appends made meanwhile; importing its lines one by one", metadata: ["error": "\(error)"])
            for line in lines {
                do {
                    summary.events += try await write([line], log: log)
                    summary.imported += 1
                } catch {
                    summary.errors.append(LineError(line: line.number, message: "not imported: \(LedgerServiceError.mapping(error))"))
                }
            }
        }
    }

    private func write(_ lines: [LineWork], log: LedgerLog) async throws -> Int {
        let metadata = RequestMetadata(actor: "import")
        return try await pool.withTransaction { connection in
            let documents: [SQL] = lines.map { line in
                let digest = Array(SHA256.hash(data: line.document))
                return "INSERT INTO documents (sha256, kind, content) VALUES (\(digest), 'import_line', \(line.document)) ON CONFLICT (sha256) DO NOTHING"
            }
            _ = try connection.pipeline(documents)
            return try log.copyAppend(lines.flatMap(\.appends), metadata: metadata, on: connection)
        }
    }
}
