import Foundation
import Testing

/// Migrations add; what they retire goes a release later (docs/operate.md, "Upgrading"): the
/// previous release keeps serving on a database this release migrated. Schema/releases.txt
/// records each release's last migration; the ones after it are read here for statements that
/// would break a server of that release.
@Suite("Migrations since the last release only add")
struct MigrationPolicyTests {
    static let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Schema")

    /// Statements a server of the previous release may trip on.
    static let destructive = [
        #"\bDROP\s+(TABLE|COLUMN|VIEW|INDEX|FUNCTION|TYPE|SCHEMA|TRIGGER)\b"#, #"\bRENAME\b"#,
        #"\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b"#, #"\bSET\s+NOT\s+NULL\b"#, #"\bREVOKE\b"#, #"\bTRUNCATE\b"#,
    ]

    /// The releases and their last migration, oldest first.
    static func releases() throws -> [(release: String, lastMigration: Int)] {
        try String(contentsOf: schema.appendingPathComponent("releases.txt"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
            .map { line in
                let parts = line.split(separator: " ")
                return (String(parts[0]), Int(parts[1]) ?? 0)
            }
    }

    /// What in `sql` breaks the rule: destructive statements, unless the migration opens by
    /// saying what it retires and which listed release deprecated it.
    static func violations(in sql: String, releases: [String]) -> [String] {
        let header = sql.split(separator: "\n").prefix(5).joined(separator: "\n")
        if let match = header.firstMatch(of: /-- retires, deprecated in ([0-9.]+):/), releases.contains(String(match.1)) { return [] }
        let code = sql.split(separator: "\n").map { line in line.split(separator: "--", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
            .joined(separator: "\n")
        return destructive.compactMap { pattern in
            guard let regex = try? Regex(pattern).ignoresCase(), let found = code.firstMatch(of: regex) else { return nil }
            return String(code[found.range])
        }
    }

    @Test("every migration after the newest release's last one only adds")
    func onlyAdds() throws {
        let releases = try Self.releases()
        let newest = try #require(releases.last, "Schema/releases.txt lists no release")
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.schema.appendingPathComponent("migrations").path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.contains { Int($0.prefix(4)) == newest.lastMigration }, "release \(newest.release)'s last migration is missing")
        for file in files where (Int(file.prefix(4)) ?? 0) > newest.lastMigration {
            let sql = try String(contentsOf: Self.schema.appendingPathComponent("migrations/\(file)"), encoding: .utf8)
            let found = Self.violations(in: sql, releases: releases.map(\.release))
            #expect(found.isEmpty, "\(file) would break a \(newest.release) server still serving: \(found)")
        }
    }

    @Test("the rule catches a drop, a rename and a new NOT NULL, and lets a declared retirement through")
    func ruleBites() {
        let releases = ["0.4.0"]
        #expect(!Self.violations(in: "ALTER TABLE orders DROP COLUMN note;", releases: releases).isEmpty)
        #expect(!Self.violations(in: "ALTER TABLE orders RENAME COLUMN a TO b;", releases: releases).isEmpty)
        #expect(!Self.violations(in: "ALTER TABLE orders ALTER COLUMN a SET NOT NULL;", releases: releases).isEmpty)
        #expect(Self.violations(in: "CREATE INDEX orders_by_user ON orders (user_id); -- DROP TABLE would be wrong", releases: releases).isEmpty)
        #expect(Self.violations(in: "-- retires, deprecated in 0.4.0: orders.note\nALTER TABLE orders DROP COLUMN note;", releases: releases).isEmpty)
        #expect(!Self.violations(in: "-- retires, deprecated in 9.9.9: orders.note\nALTER TABLE orders DROP COLUMN note;", releases: releases).isEmpty)
    }
}
