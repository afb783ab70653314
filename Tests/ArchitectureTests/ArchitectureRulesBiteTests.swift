import Testing

/// Each rule run on a few files written here that break it, and on their lawful twins: a
/// checker that finds nothing on the real tree is only worth its pass if it finds these.
@Suite("The architecture's checkers catch what breaks them")
struct ArchitectureRulesBiteTests {
    /// A manifest in the real one's style: a strict log, a strict ledger-ish library, a loose
    /// one, a C target and a system library.
    static let manifest = #"""
        // swift-tools-version: 6.2
        import PackageDescription
        let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]
        let package = Package(
            name: "Crafted",
            targets: [
                .systemLibrary(name: "CLibPQ", pkgConfig: "libpq"),
                .target(name: "Postgres", dependencies: ["CLibPQ", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
                .target(
                    name: "EventStore",
                    dependencies: [
                        "Postgres",
                        .product(name: "Crypto", package: "swift-crypto"),
                    ],
                    swiftSettings: strict
                ),
                // A target without warnings as errors: the rule's catch.
                .target(name: "Loose", dependencies: ["Postgres"]),
                .target(name: "CBuildInfo"),
                .target(name: "AppStore", swiftSettings: strict),
                .target(name: "Ledger", dependencies: ["AppStore", "Postgres"], swiftSettings: strict),
                .target(name: "LedgerQueries", dependencies: ["Ledger", "LedgerHTTP"], swiftSettings: strict),
                .target(name: "LedgerHTTP", dependencies: ["LedgerQueries"], swiftSettings: strict),
                .testTarget(name: "LedgerTests", dependencies: ["Ledger"], swiftSettings: strict),
            ]
        )
        """#

    static func repository(_ files: [String: String]) -> Repository {
        Repository(manifest: manifest, files: files)
    }

    // MARK: - SQL on the log

    @Test("SQL on events or documents outside the owners is caught, on one line or across several")
    func logOwnershipBites() {
        let repository = Self.repository([
            "Sources/Ledger/Sneaky.swift": """
                func count(_ connection: Connection) throws {
                    _ = try connection.query("SELECT count(*) FROM events WHERE event_type = 'OrderCreated'")
                    _ = try connection.query(\"""
                        SELECT name
                        FROM
                          documents WHERE name = \\(name)
                        \""")
                    try connection.execute("CREATE TABLE shadow (LIKE events INCLUDING DEFAULTS)")
                    _ = try connection.query("SELECT to_regclass('events')")
                    let url = "http://example.com/", sql = "SELECT * FROM events" // the URL's // opens no comment
                }
                """,
            "Sources/EventStore/Read.swift": #"let sql = "SELECT max(position) FROM events""#,
            "Sources/Ledger/Prose.swift": """
                // SELECT * FROM events: a comment, not SQL.
                /* INSERT INTO documents */
                let message = "the proof is missing from documents"
                let projection = "SELECT count(*) FROM projection_webhook_events"
                """,
        ])
        let found = LogOwnershipRule.findings(in: repository)
        #expect(found.map(\.file) == Array(repeating: "Sources/Ledger/Sneaky.swift", count: 5), "\(found)")
        #expect(found.map(\.line) == [2, 6, 8, 9, 10], "\(found)")
    }

    // MARK: - One clock

    @Test("a wall-clock read outside the clock's file is caught; monotonic time and the clock's file are not")
    func oneClockBites() {
        let repository = Self.repository([
            "Sources/AppleSimulator/Stamps.swift": """
                let a = Date()
                let b = Date.now
                let c = Date(timeIntervalSinceNow: 5)
                let d = time(nil)
                var e = timeval(); gettimeofday(&e, nil)
                clock_gettime(CLOCK_REALTIME, &spec)
                let f = ContinuousClock.now
                let g = DispatchTime.now()
                let h = Date(timeIntervalSince1970: 0)
                // Date() in a comment is prose.
                clock_gettime(CLOCK_MONOTONIC, &spec)
                """,
            OneClockRule.clockFile: "public static let system = WallClock { Millis.of(Date()) }",
            "Sources/EventStore/GroupCommitter.swift": "let deadline = Date(timeIntervalSinceNow: 0.005)\nlet stamp = Date()",
        ])
        let found = OneClockRule.findings(in: repository)
        #expect(Set(found.filter { $0.file == "Sources/AppleSimulator/Stamps.swift" }.map(\.line)) == [1, 2, 3, 4, 5, 6], "\(found)")
        // The named exception allows its reading, and only that one, in its file only.
        #expect(found.filter { $0.file == "Sources/EventStore/GroupCommitter.swift" }.map(\.line) == [2])
        #expect(!found.contains { $0.file == OneClockRule.clockFile })
    }

    // MARK: - Warnings as errors

    @Test("a Swift target without swiftSettings: strict is caught; a C target and a system library are not")
    func strictSettingsBites() {
        let repository = Self.repository([
            "Sources/Loose/Loose.swift": "public struct Loose {}",
            "Sources/Postgres/Connection.swift": "public struct Connection {}",
            "Sources/EventStore/EventStore.swift": "import Postgres",
        ])
        let found = StrictSettingsRule.findings(in: repository)
        #expect(found.map(\.message).count == 1)
        #expect(found.first?.file == "Package.swift")
        // The crafted manifest declares Loose on its line 18.
        #expect(found.first?.line == 18, "\(found)")
        #expect(found.first?.message.contains("Loose") == true)
    }

    // MARK: - Imports

    @Test("an import the target does not declare, and one against the layering, are caught")
    func importDirectionBites() {
        let repository = Self.repository([
            // Declared, and allowed.
            "Sources/EventStore/EventStore.swift": "import Foundation\nimport Postgres\n",
            // Not declared by EventStore (and against the layering: the log knows no domain).
            "Sources/EventStore/Decisions.swift": "import Postgres\n@testable import Ledger\n",
            // Declared in the crafted manifest, but against the layering: a read model never
            // uses the HTTP layer.
            "Sources/LedgerQueries/Reads.swift": "import Ledger\nimport LedgerHTTP\n",
            // A test may use anything it declares, and may not use what it does not.
            "Tests/LedgerTests/DecisionTests.swift": "@testable import Ledger\nimport Testing\nimport Postgres\n",
        ])
        let found = ImportDirectionRule.findings(in: repository, layering: [
            "CLibPQ": .exactly([]), "CBuildInfo": .exactly([]), "Postgres": .over(["CLibPQ"]), "EventStore": .over(["Postgres"]),
            "AppStore": .exactly([]), "Ledger": .over(["AppStore"]), "LedgerQueries": .over(["Ledger"]), "LedgerHTTP": .over(["LedgerQueries"]),
        ])
        let places = Set(found.map { "\($0.file):\($0.line)" })
        #expect(places.contains("Sources/EventStore/Decisions.swift:2"))
        #expect(places.contains("Sources/LedgerQueries/Reads.swift:2"))
        #expect(places.contains("Tests/LedgerTests/DecisionTests.swift:3"))
        #expect(!places.contains("Sources/EventStore/EventStore.swift:2"))
        // Package.swift itself: Ledger declares Postgres and LedgerQueries declares LedgerHTTP,
        // against the layering; Loose has no place in the table.
        let manifestMessages = found.filter { $0.file == "Package.swift" }.map(\.message)
        #expect(manifestMessages.contains { $0.contains("Ledger depends on Postgres") })
        #expect(manifestMessages.contains { $0.contains("LedgerQueries depends on LedgerHTTP") })
        #expect(manifestMessages.contains { $0.contains("Loose has no place") })
        // Decisions.swift:2 twice (undeclared, and against the layering), Reads.swift:2,
        // DecisionTests.swift:3, and the three in Package.swift.
        #expect(found.count == 7, "\(found.map(\.description))")
    }

    @Test("the layering's closure: a module may use what the modules under it may use, and no more")
    func layeringClosure() throws {
        let manifest = PackageManifest(text: Self.manifest)
        let queries = try #require(manifest.target(named: "LedgerQueries"))
        let allowed = Layering.allowed(for: queries, table: ["LedgerQueries": .over(["Ledger"]), "Ledger": .over(["AppStore"]), "AppStore": .exactly([])])
        #expect(allowed == ["Ledger", "AppStore"])
        // The real table: no library uses the simulator; the read side never reaches HTTP or the console.
        let library = PackageManifest.Target(name: "", kind: .target, dependencies: [], directory: "", isStrict: true, line: 0)
        for name in ["LedgerQueries", "LedgerService", "LedgerWorkers", "LedgerWebhooks", "LedgerProjections", "LedgerStore"] {
            var target = library
            target.name = name
            let uses = try #require(Layering.allowed(for: target))
            #expect(!uses.contains("LedgerHTTP") && !uses.contains("LedgerConsole") && !uses.contains("AppleSimulator"), "\(name): \(uses)")
        }
        var eventStore = library
        eventStore.name = "EventStore"
        #expect(Layering.allowed(for: eventStore) == ["Postgres", "CLibPQ", "Primitives"])
    }

    // MARK: - Reading Package.swift

    @Test("the manifest reader finds names, our dependencies (not products), folders and strictness")
    func manifestReading() throws {
        let manifest = PackageManifest(text: Self.manifest)
        #expect(manifest.targets.map(\.name) == ["CLibPQ", "Postgres", "EventStore", "Loose", "CBuildInfo", "AppStore", "Ledger", "LedgerQueries", "LedgerHTTP", "LedgerTests"])
        let store = try #require(manifest.target(named: "EventStore"))
        #expect(store.dependencies == ["Postgres"])
        #expect(store.isStrict)
        #expect(store.directory == "Sources/EventStore")
        #expect(manifest.target(named: "LedgerTests")?.directory == "Tests/LedgerTests")
        #expect(manifest.target(named: "Loose")?.isStrict == false)
    }
}
