import Foundation
import Postgres
import Spawning
import TestSupport
import Testing

/// The command line as users run it: the built `purchase-ledger` binary, its output and exit code.
@Suite("purchase-ledger command line")
struct CLITests {
    @Test("migrate twice, and from two processes at once, leaves one applied set")
    func migrateTwice() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            async let first = ToolRun.run(["migrate"], databaseURL: conninfo)
            async let second = ToolRun.run(["migrate"], databaseURL: conninfo)
            let (a, b) = try await (first, second)
            #expect(a.status == 0 && b.status == 0, "\(a.output) \(b.output)")
            #expect([a.output, b.output].filter { $0.contains("applied \(migrationCount) migrations") }.count == 1)
            let third = try await ToolRun.run(["migrate"], databaseURL: conninfo)
            #expect(third.status == 0)
            #expect(third.output.contains("schema up to date"))
            let count: Int64 = try await pool.withConnection { try $0.query("SELECT count(*) FROM schema_migrations")[0].decode(0) }
            #expect(count == Int64(migrationCount))
        }
    }

    @Test("verify exits 0 on an intact chain and 3 naming the first changed position")
    func verifyExitCodes() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            let demo = try await ToolRun.demo(databaseURL: conninfo)
            #expect(demo.status == 0, "\(demo.output)")
            #expect(demo.output.contains("chain verified"))
            #expect(demo.output.contains("documents verified"))
            #expect(demo.output.contains("bob    same receipt again       → 200 already_delivered"))
            #expect(demo.output.contains("erin   coins100 during outage   → 202 pending"))
            let intact = try await ToolRun.run(["verify"], databaseURL: conninfo)
            #expect(intact.status == 0)
            #expect(intact.output.contains("chain verified"))
            #expect(intact.output.contains("documents verified"))
            try await pool.withConnection { connection in
                try connection.executeScript(unsafeSQL: """
                    ALTER TABLE events DISABLE TRIGGER events_90_immutable;
                    UPDATE events SET event_type = 'AppleRespondeD' WHERE position = 3;
                    ALTER TABLE events ENABLE TRIGGER events_90_immutable;
                    """)
            }
            let broken = try await ToolRun.run(["verify"], databaseURL: conninfo)
            #expect(broken.status == 3)
            #expect(broken.output.contains("chain broken at position 3"))
        }
    }

    @Test("with DATABASE_URL unset, a private cluster is created on first use, reused after, and stopped on exit")
    func embeddedCluster() async throws {
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("pl-embedded-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try await ToolRun.run(["migrate", "--data-dir", folder.path], databaseURL: nil)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("applied \(migrationCount) migrations"))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("data/PG_VERSION").path))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("data/postmaster.pid").path), "stopped on exit")
        let second = try await ToolRun.run(["migrate", "--data-dir", folder.path], databaseURL: nil)
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("schema up to date"), "the same cluster, reused")
    }

    @Test("bad usage exits 2")
    func badUsage() async throws {
        let run = try await ToolRun.run(["no-such-command"], databaseURL: "host=/nonexistent")
        #expect(run.status == 2)
    }

    @Test("extend-renewals and webhooks refuse bad arguments with exit 2 before touching a database")
    func actingUsage() async throws {
        for arguments in [
            ["extend-renewals", "--product", "p", "--days", "0", "--reason", "other"],
            ["extend-renewals", "--product", "p", "--days", "91", "--reason", "other"],
            ["extend-renewals", "--product", "p", "--days", "5", "--reason", "because"],
            ["extend-renewals", "--product", "p", "--days", "5", "--reason", "other", "--storefronts", "US"],
            ["extend-renewals", "--product", "p", "--days", "5", "--reason", "other", "--environment", "Xcode"],
            ["webhooks", "redeliver", "orders", "--from", "-1"],
            ["webhooks", "redeliver", "orders", "--from", "9", "--to", "3"],
        ] {
            let run = try await ToolRun.run(arguments, databaseURL: "host=/nonexistent")
            #expect(run.status == 2, "\(arguments): \(run.output)")
        }
    }
}

/// One run of the built binary.
struct ToolRun {
    var status: Int32
    var output: String

    /// The tool beside the test bundle in the build folder.
    static var binary: URL { ChildProcess.builtProduct("purchase-ledger") }

    /// Plays the demo (the development executable `ledger-demo`, which Tools/demo runs) into
    /// `databaseURL`.
    static func demo(databaseURL: String) async throws -> ToolRun {
        try await run([], databaseURL: databaseURL, binary: ChildProcess.builtProduct("ledger-demo"))
    }

    /// Runs the tool with `DATABASE_URL` set to `databaseURL`, or unset when it is nil.
    static func run(
        _ arguments: [String], databaseURL: String?, environment extra: [String: String] = [:], binary: URL = binary
    ) async throws -> ToolRun {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = databaseURL
        environment["LOG_LEVEL"] = "warning"
        environment.merge(extra) { _, new in new }
        // Standard input stays this process's, as with Foundation's Process before.
        let (exit, output) = try await ChildProcess.run(binary.path, arguments, environment: environment, input: .inherit)
        return ToolRun(status: exit.status, output: output)
    }
}

/// How many migrations the tool ships: the files of Schema/migrations.
let migrationCount: Int = {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Schema/migrations")
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".sql") }.count
}()
