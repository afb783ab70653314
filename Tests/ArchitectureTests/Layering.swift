/// Which of our modules each target may use, from docs/architecture.md §2 and Package.swift's
/// comments: dependencies point inward. A target may use the modules it is placed over and,
/// through them, everything those may use; `exactly` allows only what it lists (the product's
/// thin shell); tests may use anything. A target missing here is a finding: a new module is
/// placed on purpose.
enum Layering {
    enum Place: Sendable {
        /// These, and whatever they may use.
        case over([String])
        /// These only.
        case exactly([String])
        /// Any module of ours (tests).
        case anything
    }

    static let table: [String: Place] = [
        // C: libpq's headers, and the build's version and commit.
        "CLibPQ": .exactly([]),
        "CBuildInfo": .exactly([]),
        // The shared primitives (clock, calendar, ISO tables, JSON value…) know nothing of ours.
        "Primitives": .exactly([]),
        // Erasure's cryptography knows only the primitives.
        "Sealing": .over(["Primitives"]),
        // The driver knows only libpq and the primitives (the one calendar, for timestamps);
        // processes and the embedded cluster know nothing of ours.
        "Postgres": .over(["CLibPQ", "Primitives"]),
        "Spawning": .exactly([]),
        "EmbeddedPostgres": .over(["Spawning"]),
        // The log knows only the driver: not the ledger's schema, not the domain.
        "EventStore": .over(["Postgres"]),
        "LedgerSchema": .exactly([]),
        // Apple's formats know only the primitives; the domain knows only them.
        "AppStore": .over(["Primitives"]),
        "AppStoreClient": .over(["AppStore"]),
        "AppleSimulator": .over(["AppStore"]),
        // The domain knows a handle's shape (a person's subject names them in the folds), never a key.
        "Ledger": .over(["AppStore", "Sealing"]),
        // The rooms above the log.
        "LedgerStore": .over(["Ledger", "EventStore", "LedgerSchema", "Sealing"]),
        "LedgerProjections": .over(["LedgerStore"]),
        "LedgerQueries": .over(["LedgerProjections"]),
        "LedgerService": .over(["LedgerStore", "AppStoreClient"]),
        "LedgerWorkers": .over(["LedgerService"]),
        "LedgerWebhooks": .over(["LedgerProjections"]),
        "LedgerConsole": .over(["LedgerQueries", "LedgerService", "LedgerWebhooks"]),
        "LedgerHTTP": .over(["LedgerConsole", "LedgerWorkers"]),
        // The released tool links no simulator; its executable is a thin shell.
        "PurchaseLedgerCLI": .over(["LedgerHTTP", "EmbeddedPostgres", "CBuildInfo"]),
        "purchase-ledger": .exactly(["PurchaseLedgerCLI"]),
        // Development executables: the simulator's, the demo and the benches.
        "apple-simulator": .over(["AppleSimulator", "AppStoreClient"]),
        "ledger-demo": .over(["PurchaseLedgerCLI", "AppleSimulator"]),
        "ledger-bench": .over(["LedgerHTTP", "AppleSimulator", "Spawning"]),
        // The tests' helpers stay below the ledger, so every test target may use them.
        "TestSupport": .over(["EventStore", "Spawning"]),
    ]

    /// What `target` may use, or nil for anything (a test target, whatever the table says).
    static func allowed(for target: PackageManifest.Target, table: [String: Place] = table) -> Set<String>? {
        if target.kind == .testTarget { return nil }
        switch table[target.name] {
        case .anything, nil: return nil
        case .exactly(let names): return Set(names)
        case .over(let names):
            var allowed = Set<String>()
            var next = names
            while let name = next.popLast() {
                guard allowed.insert(name).inserted else { continue }
                switch table[name] {
                case .over(let below), .exactly(let below): next += below
                case .anything, nil: break
                }
            }
            return allowed
        }
    }
}
