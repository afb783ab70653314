import Testing

/// The rules Package.swift and docs/architecture.md state, held over the real tree: each test
/// names every file and line that breaks its rule. `ArchitectureRulesBiteTests` shows each
/// checker catches a break written for it, so a pass here is not a checker that sees nothing.
@Suite("The architecture's rules hold over the tree")
struct ArchitectureTests {
    /// Read once for every test of the suite.
    static let checkedOut = Result { try Repository.checkedOut() }

    static func repository() throws -> Repository {
        let repository = try checkedOut.get()
        // A checker over a tree it could not read would pass: make sure it read this one.
        try #require(repository.manifest.targets.count >= 30, "read \(repository.manifest.targets.count) targets from Package.swift")
        try #require(repository.productionFiles.count >= 300, "read \(repository.productionFiles.count) files under Sources/")
        for name in ["ledger-bench", "LedgerSchema"] {
            // The benches, and a target whose folder is not under Sources/ (`path: "Schema"`).
            try #require(repository.manifest.target(named: name).map { !repository.files(of: $0).isEmpty } == true, "no sources read for \(name)")
        }
        return repository
    }

    static func expectNone(_ findings: [Finding], _ rule: String) {
        for finding in findings {
            Issue.record("\(finding)")
        }
        #expect(findings.isEmpty, "\(findings.count) places break the rule: \(rule)")
    }

    @Test("only EventStore and LedgerStore write SQL on events and documents")
    func logOwnership() throws {
        Self.expectNone(LogOwnershipRule.findings(in: try Self.repository()), "SQL on the log outside its owners")
    }

    @Test("the wall clock is read only in WallClock.system's file")
    func oneClock() throws {
        Self.expectNone(OneClockRule.findings(in: try Self.repository()), "one clock")
    }

    @Test("every Swift target of ours builds with warnings as errors")
    func strictSettings() throws {
        Self.expectNone(StrictSettingsRule.findings(in: try Self.repository()), "swiftSettings: strict")
    }

    @Test("imports are declared in Package.swift and point inward")
    func importDirection() throws {
        Self.expectNone(ImportDirectionRule.findings(in: try Self.repository()), "imports point inward")
    }

    @Test("every target of ours has a place in the layering table, and every place a target")
    func layeringTableMatchesManifest() throws {
        let repository = try Self.repository()
        let names = Set(repository.manifest.targets.map(\.name))
        for name in Layering.table.keys where !names.contains(name) {
            Issue.record("the layering table places \(name), which Package.swift does not declare")
        }
    }
}
