import Foundation
import LedgerStore
import Postgres
import Sealing
import TestSupport
import Testing

/// What the unit and an operator rely on before `serve` takes a request: the version it
/// reports, `config check`, and the refusals that must not become a restart loop.
@Suite("purchase-ledger as the unit runs it: version, configuration check, refusals", .timeLimit(.minutes(3)))
struct ReleaseCommandTests {
    /// The release number in the repository's VERSION file.
    static let release: String = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("VERSION")
        return ((try? String(contentsOf: file, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    /// Settings a server needs, with no database (each test adds its own).
    static let minimal = ["APPLE_BUNDLE_ID": "com.example.app", "LEDGER_API_TOKENS": "app-token-0123456789:app"]

    @Test("--version prints the VERSION file's release, marked +dev with an unknown commit when Tools/release did not stamp the build")
    func version() async throws {
        #expect(!Self.release.isEmpty)
        let run = try await ToolRun.run(["--version"], databaseURL: nil)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.trimmingCharacters(in: .whitespacesAndNewlines) == "purchase-ledger \(Self.release)+dev (unknown)")
    }

    @Test("config check prints every setting with its source (environment, file, default), masks secrets, and passes a migrated database")
    func checkPasses() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let migrated = try await ToolRun.run(["migrate"], databaseURL: conninfo)
            #expect(migrated.status == 0, "\(migrated.output)")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).env")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data("""
                # as the package's conffile holds them
                APPLE_BUNDLE_ID=com.example.app
                LEDGER_API_TOKENS="secret-app-token-42:app,secret-finance-token-42:finance"
                APPLE_SHARED_SECRET=hunter2-shared-secret
                LEDGER_COMMISSION=standard
                """.utf8).write(to: file)
            let run = try await ToolRun.run(
                ["config", "check", "--env-file", file.path], databaseURL: conninfo, environment: ["LEDGER_COMMISSION": "small_business"])
            #expect(run.status == 0, "\(run.output)")
            let lines = run.output.split(separator: "\n").map(String.init)
            func line(_ name: String) -> String { lines.first { $0.hasPrefix(name + " ") } ?? "" }
            #expect(line("LEDGER_API_TOKENS").contains("file") && line("LEDGER_API_TOKENS").contains("********:app,********:finance"))
            #expect(line("APPLE_SHARED_SECRET").contains("file") && line("APPLE_SHARED_SECRET").contains("********"))
            #expect(line("LEDGER_COMMISSION").contains("environment") && line("LEDGER_COMMISSION").contains("small_business"))
            #expect(line("LEDGER_TRANSFER_POLICY").contains("default") && line("LEDGER_TRANSFER_POLICY").contains("keep"))
            #expect(line("DATABASE_URL").contains("environment"))
            #expect(!run.output.contains("secret-app-token-42") && !run.output.contains("hunter2"), "a secret printed:\n\(run.output)")
            #expect(run.output.contains("LEDGER_API_TOKENS: 2 tokens (app, finance)"))
            #expect(run.output.contains("acts as ledger_app; schema current"), "\(run.output)")
            #expect(lines.last == "configuration ok")
        }
    }

    @Test(
        "config check and serve exit 78 with one line naming the bad setting",
        arguments: [
            ("LEDGER_TRANSFER_POLICY", ["LEDGER_TRANSFER_POLICY": "sometimes"]),
            ("LEDGER_API_TOKENS", ["LEDGER_API_TOKENS": "short:app"]),
            ("APPLE_ISSUER_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY", ["APPLE_ISSUER_ID": "issuer"]),
            ("LEDGER_CATALOG", ["LEDGER_CATALOG": "/nonexistent/catalog.json"]),
            ("LEDGER_WEBHOOK_SECRET", ["LEDGER_WEBHOOKS": "app=https://example.com/hook"]),
            ("LEDGER_KEY_ENCRYPTION_KEY", ["LEDGER_KEY_ENCRYPTION_KEY": "/nonexistent/kek"]),
        ])
    func refusesBadSetting(named setting: String, settings: [String: String]) async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let migrated = try await ToolRun.run(["migrate"], databaseURL: conninfo)
            #expect(migrated.status == 0, "\(migrated.output)")
            let environment = Self.minimal.merging(settings) { $1 }
            for command in [["config", "check"], ["serve", "--address", "127.0.0.1:0"]] {
                let run = try await ToolRun.run(command, databaseURL: conninfo, environment: environment)
                #expect(run.status == 78, "\(command) with \(settings): \(run.status)\n\(run.output)")
                let errors = run.output.split(separator: "\n").filter { $0.hasPrefix("configuration error:") }
                #expect(errors.count == 1 && errors[0].contains(setting), "\(command): \(run.output)")
            }
        }
    }

    @Test(
        "a LEDGER_APPS file that cannot be used stops config check and serve with 78 and one line naming it and what is wrong",
        arguments: [
            (#"{"apps": [{"bundle_id": "com.example.app", "secret": "x"}]}"#, "unknown field secret"),
            (#"{"apps": [{"bundle_id": "com.example.app"}, {"bundle_id": "com.example.app"}]}"#, "bundle id com.example.app twice"),
            (#"{"apps": [{"bundle_id": "com.example.app", "catalog": "missing.json"}]}"#, "app com.example.app, catalog): cannot read"),
            (#"{"apps": []}"#, "lists no app"),
        ])
    func refusesBadAppsFile(text: String, expected: String) async throws {
        try await TemporaryFolder.with("apps") { folder in
            let file = folder.appendingPathComponent("apps.json")
            try Data(text.utf8).write(to: file)
            try await TestDatabase.withSchema { conninfo, _ in
                let migrated = try await ToolRun.run(["migrate"], databaseURL: conninfo)
                #expect(migrated.status == 0, "\(migrated.output)")
                let environment = ["LEDGER_APPS": file.path, "LEDGER_API_TOKENS": "app-token-0123456789:app"]
                for command in [["config", "check"], ["serve", "--address", "127.0.0.1:0"]] {
                    let run = try await ToolRun.run(command, databaseURL: conninfo, environment: environment)
                    #expect(run.status == 78, "\(command): \(run.status)\n\(run.output)")
                    let errors = run.output.split(separator: "\n").filter { $0.hasPrefix("configuration error:") }
                    #expect(errors.count == 1 && errors[0].contains("LEDGER_APPS") && errors[0].contains(expected), "\(command): \(run.output)")
                }
            }
        }
    }

    @Test(
        "the apps listed in LEDGER_APPS are served, one as APPLE_BUNDLE_ID would be: config check names the file, each app and its catalog's products",
        arguments: [
            (#"[{"bundle_id": "com.example.app", "app_apple_id": 1234, "catalog": "game.json"}]"#, ["com.example.app": 1]),
            (#"[{"bundle_id": "com.example.app", "app_apple_id": 1234, "catalog": "game.json"}, {"bundle_id": "com.example.puzzle", "app_apple_id": 5678, "catalog": "puzzle.json"}]"#,
             ["com.example.app": 1, "com.example.puzzle": 2]),
        ])
    func servesAppsFromAppsFile(apps: String, products: [String: Int]) async throws {
        try await TemporaryFolder.with("apps") { folder in
            try Data(#"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}}]}"#.utf8)
                .write(to: folder.appendingPathComponent("game.json"))
            // The puzzle sells the game's product id, another product, and one of its own.
            try Data(#"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 300}}, {"product_id": "com.example.pro", "kind": "auto_renewable"}]}"#.utf8)
                .write(to: folder.appendingPathComponent("puzzle.json"))
            let file = folder.appendingPathComponent("apps.json")
            try Data(#"{"apps": \#(apps)}"#.utf8).write(to: file)
            try await TestDatabase.withSchema { conninfo, _ in
                let migrated = try await ToolRun.run(["migrate"], databaseURL: conninfo)
                #expect(migrated.status == 0, "\(migrated.output)")
                let run = try await ToolRun.run(
                    ["config", "check"], databaseURL: conninfo, environment: ["LEDGER_APPS": file.path, "LEDGER_API_TOKENS": "app-token-0123456789:app"])
                #expect(run.status == 0, "\(run.output)")
                #expect(run.output.contains("LEDGER_APPS: \(file.path) lists \(products.keys.sorted().joined(separator: ", "))"), "\(run.output)")
                for (app, count) in products {
                    #expect(run.output.contains("app \(app), catalog): \(count) products"), "\(run.output)")
                }
            }
        }
    }

    @Test("keys wrapped under one key-encryption key: serve without it, or with another, exits 78 naming LEDGER_KEY_ENCRYPTION_KEY; a file of neither 32 bytes nor 64 hex digits is refused by config check too")
    func keyEncryptionKeyMustOpenTheKeys() async throws {
        try await TemporaryFolder.with("kek") { folder in
            let (first, other, bad) = (folder.appendingPathComponent("first"), folder.appendingPathComponent("other"), folder.appendingPathComponent("bad"))
            try Data(String(repeating: "ab", count: 32).utf8).write(to: first)
            try Data(repeating: 7, count: 32).write(to: other)
            try Data("not a key".utf8).write(to: bad)
            try await TestDatabase.withSchema { conninfo, pool in
                let migrated = try await ToolRun.run(["migrate"], databaseURL: conninfo)
                #expect(migrated.status == 0, "\(migrated.output)")
                // The keys as a server given `first` wraps them.
                let kek = try KeyEncryptionKey(fileContents: Array(try Data(contentsOf: first)))
                _ = try await SubjectStore(pool: pool, keyEncryptionKey: kek).lookupKey()
                for (file, why) in [(nil, "is not set"), (other.path, "holds"), (bad.path, "neither 32 bytes")] as [(String?, String)] {
                    let environment = Self.minimal.merging(file.map { ["LEDGER_KEY_ENCRYPTION_KEY": $0] } ?? [:]) { $1 }
                    let run = try await ToolRun.run(["serve", "--address", "127.0.0.1:0"], databaseURL: conninfo, environment: environment)
                    #expect(run.status == 78, "\(file ?? "unset"): \(run.output)")
                    let errors = run.output.split(separator: "\n").filter { $0.hasPrefix("configuration error:") }
                    #expect(errors.count == 1 && errors[0].contains("LEDGER_KEY_ENCRYPTION_KEY") && errors[0].contains(why), "\(run.output)")
                }
                let checked = try await ToolRun.run(
                    ["config", "check"], databaseURL: conninfo, environment: Self.minimal.merging(["LEDGER_KEY_ENCRYPTION_KEY": bad.path]) { $1 })
                #expect(checked.status == 78, "\(checked.output)")
            }
        }
    }

    @Test("under systemd (INVOCATION_ID set), serve and migrate without DATABASE_URL exit 78 instead of starting a private cluster")
    func databaseRequiredUnderSystemd() async throws {
        for command in [["serve", "--address", "127.0.0.1:0"], ["migrate"]] {
            let run = try await ToolRun.run(command, databaseURL: nil, environment: Self.minimal.merging(["INVOCATION_ID": "0123456789abcdef"]) { $1 })
            #expect(run.status == 78, "\(command): \(run.output)")
            #expect(run.output.contains("configuration error: DATABASE_URL is required"), "\(command): \(run.output)")
        }
    }

    @Test("the package's ledger.env lists, commented, exactly the settings config check prints")
    func environmentFileListsEverySetting() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("packaging/ledger.env")
        let listed = Set(try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^#([A-Z][A-Z0-9_]+)=/).map { String($0.1) }
        })
        let run = try await ToolRun.run(["config", "check"], databaseURL: nil, environment: Self.minimal)
        let printed = Set(run.output.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }.compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(printed.count > 20, "\(run.output)")
        #expect(listed == printed, "only in ledger.env: \(listed.subtracting(printed).sorted()); only in config check: \(printed.subtracting(listed).sorted())")
    }

    @Test("serve refuses, exit 1, a database without this release's migrations, and says to run migrate")
    func serveRefusesUnmigrated() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let run = try await ToolRun.run(["serve", "--address", "127.0.0.1:0"], databaseURL: conninfo, environment: Self.minimal)
            #expect(run.status == 1, "\(run.output)")
            #expect(run.output.contains("run `purchase-ledger migrate` first"), "\(run.output)")
        }
    }
}
