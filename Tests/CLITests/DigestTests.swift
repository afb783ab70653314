import Foundation
import Postgres
import TestSupport
import Testing

/// `digest` and `verify --digest`: a published head catches a ledger rewritten wholesale, which
/// the chain check alone cannot (a rewritten log can carry a recomputed, sound chain).
@Suite("purchase-ledger digest")
struct DigestTests {
    @Test("a digest of one ledger verifies against it as it grows, and not against another ledger with a sound chain of its own")
    func digestCatchesRewrite() async throws {
        let catalog = FileManager.default.temporaryDirectory.appendingPathComponent("digest-catalog-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: catalog) }
        try Data(#"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD"}]}"#.utf8)
            .write(to: catalog)
        try await TestDatabase.withSchema { original, _ in
            try await TestDatabase.withSchema { rewritten, _ in
                for conninfo in [original, rewritten] {
                    #expect(try await ToolRun.run(["migrate"], databaseURL: conninfo).status == 0)
                    let loaded = try await ToolRun.run(["catalog", "load", catalog.path, "--bundle-id", "com.example.app"], databaseURL: conninfo)
                    #expect(loaded.status == 0, "\(loaded.output)")
                }
                let digest = try await ToolRun.run(["digest"], databaseURL: original)
                #expect(digest.status == 0, "\(digest.output)")
                let published = digest.output.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(published.wholeMatch(of: /1:[0-9a-f]{64}/) != nil, "\(published)")

                // The log grows after publication: it still extends the published head.
                #expect(try await ToolRun.run(["catalog", "load", catalog.path, "--bundle-id", "com.example.app"], databaseURL: original).status == 0)
                let extends = try await ToolRun.run(["verify", "--digest", published], databaseURL: original)
                #expect(extends.status == 0, "\(extends.output)")
                #expect(extends.output.contains("digest verified: the log extends \(published)"))

                // Another history of the same length: its chain is sound, the digest is not its.
                let other = try await ToolRun.run(["verify", "--digest", published], databaseURL: rewritten)
                #expect(other.status == 3, "\(other.output)")
                #expect(other.output.contains("chain verified: 1 events"))
                #expect(other.output.contains("digest broken: the event at position 1 has hash"))

                // A published position the log no longer reaches: events were removed.
                let beyond = "9" + published.drop(while: { $0 != ":" })
                let truncated = try await ToolRun.run(["verify", "--digest", beyond], databaseURL: original)
                #expect(truncated.status == 4, "\(truncated.output)")
                #expect(truncated.output.contains("digest broken: the log ends at position 2, before the published position 9"))

                let malformed = try await ToolRun.run(["verify", "--digest", "12:zz"], databaseURL: original)
                #expect(malformed.status == 2, "\(malformed.output)")
                #expect(malformed.output.contains("--digest must be POSITION:HASH"))
            }
        }
    }
}
