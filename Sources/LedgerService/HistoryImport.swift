import AppStore
import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
import Postgres
import Primitives

/// `purchase-ledger import FILE`: history from an earlier system (JSON lines, `ImportLine`),
/// decided by the same rules as live receipts (without orders) and appended through COPY in
/// batches. Each line becomes a submission named after the line's sha256, so a line imported
/// once is skipped after: running the import again appends nothing. A bad line is reported by
/// number and nothing of it is kept; the others go in.
///
/// Its people are recorded as the API records them (docs/erasure.md): a line's user id as their
/// handle, its tokens as theirs, and the line itself sealed for them.
public struct HistoryImport: Sendable {
    public struct LineError: Sendable, Hashable {
        public var line: Int
        public var message: String
    }

    public struct Summary: Sendable {
        public var lines = 0
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
    /// Dates each imported line's `ReceiptSubmitted` (the ledger's clock).
    let clock: WallClock
    let logger: Logger
    let batchLines: Int
    let people: People

    public init(pool: ConnectionPool, configuration: LedgerConfiguration, batchLines: Int = 200, clock: WallClock, logger: Logger) {
        self.people = People(subjects: SubjectStore(pool: pool, keyEncryptionKey: configuration.keyEncryptionKey))
        self.pool = pool
        self.configuration = configuration
        self.batchLines = batchLines
        self.clock = clock
        self.logger = logger
    }

    /// Imports every line of `file`; `progress` gets (lines done, lines in the file).
    public func run(file: URL, progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Summary {
        // Each person's subject and key read once for the run, not once per line.
        try await People.$sealedInThisRequest.withValue(People.SealedNames()) {
            try await importing(file: file, progress: progress)
        }
    }

    private func importing(file: URL, progress: (@Sendable (Int64, Int64) -> Void)?) async throws -> Summary {
        let data = try Data(contentsOf: file, options: .mappedIfSafe)
        var lines: [Range<Data.Index>] = []
        var start = data.startIndex
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            lines.append(start..<end)
            start = end < data.endIndex ? data.index(after: end) : end
        }
        var summary = Summary()
        var batch = Batch()
        // Lines met earlier in this run: the same line twice is imported once.
        var handled = Set<String>()
        let log = LedgerLog(store: EventStore(pool: pool, logger: logger))
        // One cache for the run: each line's look-ups read the catalog's head with them and
        // reload it only when it grew.
        let reads = LedgerReads(pool: pool)
        for chunkStart in stride(from: 0, to: lines.count, by: batchLines) {
            let chunk = chunkStart..<min(chunkStart + batchLines, lines.count)
            let bytes = chunk.map { Array(data[lines[$0]]) }
            let names = bytes.map { DocumentStore.name(of: $0) }
            // Which lines were imported before: one query per chunk, not one per line.
            let seen = try await importedBefore(names, reads: reads)
            for (offset, index) in chunk.enumerated() {
                let number = index + 1
                summary.lines += 1
                defer { progress?(Int64(number), Int64(lines.count)) }
                if seen.contains(names[offset]) || !handled.insert(names[offset]).inserted
                    || bytes[offset].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                    summary.skipped += 1
                    continue
                }
                do {
                    let line = try ImportLine.parse(bytes[offset], apps: configuration.apps)
                    var decided = try await decide(line, bytes: bytes[offset], name: names[offset], number: number, reads: reads, pending: batch)
                    if case .conflicts = decided {
                        // An earlier line of this batch touches the same purchases: commit it,
                        // then decide this line against what it recorded.
                        try await flush(&batch, into: &summary, log: log)
                        decided = try await decide(line, bytes: bytes[offset], name: names[offset], number: number, reads: reads, pending: batch)
                    }
                    switch decided {
                    case .append(let work): batch.add(work)
                    case .conflicts: throw LedgerServiceError(.invalidRequest, "the line conflicts with itself")
                    }
                } catch let error as LedgerServiceError where error.code == .invalidRequest {
                    summary.errors.append(LineError(line: number, message: error.message))
                }
                if batch.lines.count >= batchLines { try await flush(&batch, into: &summary, log: log) }
            }
        }
        try await flush(&batch, into: &summary, log: log)
        return summary
    }

    /// The names (sha256) among `names` whose line was imported before.
    private func importedBefore(_ names: [String], reads: LedgerReads) async throws -> Set<String> {
        let streams = names.map { Streams.submission(Self.submissionId(name: $0)) }
        let found = try await mappingDatabaseErrors { try await reads.existingStreams(streams) }
        let byStream = Dictionary(zip(streams, names), uniquingKeysWith: { first, _ in first })
        return Set(found.compactMap { byStream[$0] })
    }

    /// A line's submission: named after the line's sha256, so the same line is the same submission.
    static func submissionId(name: String) -> String { "import-" + name.prefix(32) }

    private enum Decided {
        case append(LineWork)
        case conflicts
    }

    /// A decided line: the statement storing its document, and its appends.
    struct LineWork {
        var number: Int
        var document: SQL
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
        _ line: ImportLine, bytes: [UInt8], name: String, number: Int, reads: LedgerReads, pending: Batch
    ) async throws -> Decided {
        // The submission keeps the plain line's name, so a line is known again however it is
        // sealed; the document is stored, and cited, as sealed for its person.
        let (user, evidence, document) = try await mappingDatabaseErrors {
            let user = try await people.handle(forUser: line.userId)
            let document = DocumentStore.insert(bytes, kind: "import_line", sealedFor: try await people.documentSeal(forUser: user))
            return (user, try await people.recordingTokens(of: line.evidence), document)
        }
        let submission = Submission(submissionId: Self.submissionId(name: name), userId: user, transactionId: line.transactionId)
        let context = try await mappingDatabaseErrors {
            try await reads.context(
                for: evidence, userId: user, orderId: nil,
                bundleId: line.evidence.bundleId.flatMap { configuration.apps.app($0)?.bundleId } ?? configuration.bundleId,
                transferPolicy: configuration.transferPolicy)
        }
        let decision = PurchaseDecider.decide(submission, evidence: evidence, context: context)
        if case .rejected(let code, let message) = decision.outcome {
            throw LedgerServiceError(.invalidRequest, "\(code.rawValue): \(message)")
        }
        let submitted = ReceiptSubmitted(
            submissionId: submission.submissionId, userId: user, orderId: nil, transactionId: nil, kind: .imported,
            documentSha256: document.name, submittedAtMs: clock())
        let appends = decision.appends(for: submission, expecting: .noStream, after: [.receiptSubmitted(submitted)])
        // Streams appended with `.any` (a subscription's observations) may repeat across lines.
        let claimed = appends.filter { $0.expectation != .any }.map(\.stream)
        if claimed.contains(where: pending.streams.contains) { return .conflicts }
        return .append(LineWork(number: number, document: document.statement, appends: appends))
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
            _ = try connection.pipeline(lines.map(\.document))
            return try log.copyAppend(lines.flatMap(\.appends), metadata: metadata, on: connection)
        }
    }
}
