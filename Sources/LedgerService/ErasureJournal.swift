import Foundation
import LedgerStore

/// `LEDGER_ERASURE_JOURNAL`: a file outside the database listing every erasure (its subject, its
/// time and its request id: never the person's id), a line each, synced before the person's key
/// is destroyed. A point-in-time restore to before an erasure brings the key back and loses the
/// `UserErased`; the journal survives it, and re-applying it (`serve` at start, `purchase-ledger
/// erasure reapply`) erases that person again (docs/erasure.md, "Backups").
public struct ErasureJournal: Sendable {
    public let path: String
    let file: AppendOnlyFile

    public init(path: String) {
        self.path = path
        file = AppendOnlyFile(path: path, setting: "LEDGER_ERASURE_JOURNAL")
    }

    /// One erasure as the journal keeps it.
    public struct Entry: Codable, Sendable, Hashable {
        public var subject: String
        public var erasedAtMs: Int64
        public var requestId: String

        enum CodingKeys: String, CodingKey {
            case subject
            case erasedAtMs = "erased_at_ms"
            case requestId = "request_id"
        }
    }

    /// Appends `entry` and waits for the disk: an erasure whose line may be lost is not yet done.
    func append(_ entry: Entry) async throws {
        try await file.append(String(decoding: try JSONEncoder().encode(entry), as: UTF8.self))
    }

    /// The erasures the journal lists, each subject once (its first line). A missing file lists
    /// none; a line that is not an entry (one cut short by a crash while it was written) is
    /// skipped, as its erasure had not destroyed a key yet.
    public func entries() throws -> [Entry] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else { throw ErasureJournalError(path: path, reason: "cannot be read") }
        var seen: Set<String> = []
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let entry = try? JSONDecoder().decode(Entry.self, from: Data(line)), seen.insert(entry.subject).inserted else { return nil }
            return entry
        }
    }

    /// True when the journal can be appended to (checked at start: exit 78 otherwise).
    public var isWritable: Bool { file.isWritable }
}

public struct ErasureJournalError: Error, CustomStringConvertible {
    let path: String
    let reason: String
    public var description: String { "LEDGER_ERASURE_JOURNAL \(path): \(reason)" }
}
