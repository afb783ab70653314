// swift-tools-version: 6.2
import PackageDescription

// Dependencies point inward (docs/architecture.md §2): Primitives knows nothing of ours, Postgres
// only libpq and Primitives, EventStore only Postgres, AppStore only Apple's formats (over
// Primitives); the executable is a thin shell over PurchaseLedgerCLI.
// Every target of ours builds with warnings as errors: a fresh build has none, and CI fails on a
// new one (SE-0480; packages we depend on are not affected).
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "PurchaseLedger",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "purchase-ledger", targets: ["purchase-ledger"]),
        // Development executables: never in the release package.
        .executable(name: "apple-simulator", targets: ["apple-simulator"]),
        .executable(name: "ledger-demo", targets: ["ledger-demo"]),
        .library(name: "Primitives", targets: ["Primitives"]),
        .library(name: "Sealing", targets: ["Sealing"]),
        .library(name: "Postgres", targets: ["Postgres"]),
        .library(name: "EventStore", targets: ["EventStore"]),
        .library(name: "AppStore", targets: ["AppStore"]),
        .library(name: "AppStoreClient", targets: ["AppStoreClient"]),
        .library(name: "AppleSimulator", targets: ["AppleSimulator"]),
        .library(name: "Ledger", targets: ["Ledger"]),
        .library(name: "LedgerStore", targets: ["LedgerStore"]),
        .library(name: "LedgerProjections", targets: ["LedgerProjections"]),
        .library(name: "LedgerQueries", targets: ["LedgerQueries"]),
        .library(name: "LedgerService", targets: ["LedgerService"]),
        .library(name: "LedgerWorkers", targets: ["LedgerWorkers"]),
        .library(name: "LedgerWebhooks", targets: ["LedgerWebhooks"]),
        .library(name: "LedgerConsole", targets: ["LedgerConsole"]),
        .library(name: "LedgerHTTP", targets: ["LedgerHTTP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The values and pure functions every layer shares, the driver's included: the wall clock's
        // type and milliseconds (not its reading: `WallClock.system` stays in AppStoreClient, out of
        // reach of the pure modules), constant-time compare, base64url, the one civil calendar
        // (UTCDays), the ISO 4217 and 3166 tables and the JSON value. No module of ours, and of
        // Foundation only its core (FoundationEssentials) for `Date`, `Data` and `JSONEncoder`.
        .target(name: "Primitives", swiftSettings: strict),
        // Erasure's cryptography (docs/erasure.md): subjects and their keys, values
        // sealed under them, the index key's look-ups and the key-encryption key's wrapping. Pure:
        // no database, no clock; the subject store over it is LedgerStore's.
        .target(
            name: "Sealing",
            dependencies: [
                "Primitives", .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Postgres",
            dependencies: [
                "CLibPQ", "Primitives",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The one way the tests, the benches and the embedded cluster start processes:
        // posix_spawn with nothing inherited above standard error, waited for off the
        // cooperative pool.
        .target(name: "Spawning", swiftSettings: strict),
        .target(
            name: "EmbeddedPostgres",
            dependencies: ["Spawning", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The log and the Migrator that applies the migrations it is given: it knows no table of
        // the ledger's beyond its own (LedgerSchema, which carries every projection's, is handed
        // in by LedgerStore, the CLI and the tests).
        .target(
            name: "EventStore",
            dependencies: [
                "Postgres", "Primitives",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The numbered SQL migrations live in the top-level Schema/ folder; this target only
        // ships them as a resource so the tool and the tests apply the same files.
        .target(
            name: "LedgerSchema",
            path: "Schema",
            exclude: ["releases.txt"],
            resources: [.copy("migrations")],
            swiftSettings: strict
        ),
        // Apple's formats: models, decoding, signed-data verification at a given time, and App
        // Store Connect's sales and financial reports read exactly. No network, no clock, no files
        // (time comes in as a WallClock, certificates and reports as bytes or text): the domain
        // (Ledger) depends on this and Primitives alone, and the compiler keeps it so.
        .target(
            name: "AppStore",
            dependencies: [
                "Primitives",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Apple's services asked over HTTP: verifyReceipt, and the App Store Server API and App Store
        // Connect API through one core (AppleAPICore: exchange, token, back-off, Retry-After, error
        // kinds; AppleAPIAccess: key and retry policy); the offer signatures the ledger signs for
        // StoreKit with the same In-App Purchase key; and WallClock.system, the one wall-clock read.
        .target(
            name: "AppStoreClient",
            dependencies: [
                "AppStore", "Primitives",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "AppleSimulator",
            dependencies: [
                "AppStore", "Primitives",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The domain, pure: events, decisions, projections as folds, reports reconciled against
        // the ledger's sales. No I/O.
        .target(name: "Ledger", dependencies: ["AppStore", "Primitives", "Sealing"], swiftSettings: strict),
        // The ledger's log: typed appends, and every question the flow asks of `events` and
        // `documents` (LedgerReads). The only module above EventStore that writes SQL on them.
        .target(
            name: "LedgerStore",
            dependencies: [
                "Ledger", "EventStore", "LedgerSchema", "Postgres", "AppStore", "Primitives", "Sealing",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // The projection machinery and the projections' SQL: the runner that follows the log,
        // the batched row changes, blue/green replay and its comparison. Changes when a read
        // model's tables or the way they are written change; knows nothing of commands or HTTP.
        .target(
            name: "LedgerProjections",
            dependencies: [
                "Ledger", "LedgerStore", "EventStore", "Postgres", "AppStore", "Primitives", "Sealing",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The read models and reports: queries over the projections' tables, read-your-writes
        // (waiting on the runner, or on a standby's replay), revenue and its CSV, timelines.
        .target(
            name: "LedgerQueries",
            dependencies: [
                "LedgerProjections", "Ledger", "LedgerStore", "EventStore", "Postgres", "AppStore", "Primitives",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The commands: the purchase flow wired to the store and Apple (orders, receipts,
        // notifications, spends, restores, imports), each decided by Ledger and appended.
        .target(
            name: "LedgerService",
            dependencies: [
                "Ledger", "LedgerStore", "EventStore", "Postgres", "AppStore", "AppStoreClient", "Primitives", "Sealing",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The workers `serve` runs beside the routes, each a loop over the commands: the retry
        // of pending receipts, reconciliation with Apple's notification history, consumption
        // answers (and next the price-point and webhook workers).
        .target(
            name: "LedgerWorkers",
            dependencies: [
                "LedgerService", "Ledger", "LedgerStore", "EventStore", "Postgres", "AppStore", "AppStoreClient", "Primitives",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Telling the app's backends (docs/architecture.md §10): Standard Webhooks signatures, the
        // delivery of the webhook messages projection to each endpoint (lease, checkpoint,
        // retries, per-user order), its status and redelivery, and a receiver that verifies
        // (the demo's, the tests' and the bench's). Reads the log only through the projection.
        .target(
            name: "LedgerWebhooks",
            dependencies: [
                "LedgerProjections", "LedgerStore", "Ledger", "EventStore", "Postgres", "Primitives", "Sealing",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The web console for finance and support (server-rendered HTML, sessions, CSRF): the
        // read models and reports the API serves, shown to people. Knows nothing of tokens'
        // storage or the API's routes; LedgerHTTP mounts it.
        .target(
            name: "LedgerConsole",
            dependencies: [
                "LedgerQueries", "LedgerService", "LedgerWebhooks", "LedgerStore", "Ledger", "AppStore", "Postgres", "Primitives",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Templates"), .copy("Static")],
            swiftSettings: strict
        ),
        .target(
            name: "LedgerHTTP",
            dependencies: [
                "LedgerConsole", "LedgerWorkers", "LedgerWebhooks", "LedgerQueries", "LedgerProjections", "LedgerService", "LedgerStore", "Ledger", "EventStore", "Postgres", "AppStore", "AppStoreClient", "Primitives", "Sealing",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources/openapi.yaml")],
            swiftSettings: strict
        ),
        // The release number and commit `purchase-ledger --version` prints: VERSION read at compile
        // time, the commit stamped by Tools/release (C, since only a C macro carries a string in
        // from the command line).
        .target(name: "CBuildInfo"),
        // Every command of the released tool. No simulator here: the product links none.
        .target(
            name: "PurchaseLedgerCLI",
            dependencies: [
                "CBuildInfo", "Postgres", "EmbeddedPostgres", "EventStore", "AppStore", "AppStoreClient", "Ledger", "LedgerStore", "LedgerProjections", "LedgerQueries", "LedgerService", "LedgerWorkers", "LedgerWebhooks", "LedgerHTTP", "Primitives",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "ledger-bench",
            dependencies: [
                "Postgres", "EventStore", "AppStore", "AppStoreClient", "AppleSimulator", "Ledger", "LedgerStore", "LedgerProjections", "LedgerQueries", "LedgerService", "LedgerWorkers", "LedgerWebhooks", "LedgerConsole", "LedgerHTTP", "Spawning", "Primitives", "Sealing",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "purchase-ledger",
            dependencies: ["PurchaseLedgerCLI"],
            swiftSettings: strict
        ),
        // Our Apple-compatible server for the demo, the tests and the benches.
        .executableTarget(
            name: "apple-simulator",
            dependencies: [
                "AppleSimulator", "AppStoreClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Tools/demo: the ledger and the simulator in one process, a day of purchases played
        // through the API. Uses the CLI's database options and printers (package access).
        .executableTarget(
            name: "ledger-demo",
            dependencies: [
                "PurchaseLedgerCLI", "AppleSimulator", "AppStore", "AppStoreClient", "EventStore", "Postgres", "Ledger", "LedgerStore",
                "LedgerProjections", "LedgerQueries", "LedgerService", "LedgerWorkers", "LedgerWebhooks", "LedgerHTTP", "Primitives",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Postgres", "EventStore", "Spawning", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        .testTarget(name: "PrimitivesTests", dependencies: ["Primitives"], swiftSettings: strict),
        .testTarget(name: "SealingTests", dependencies: ["Sealing", "Primitives"], swiftSettings: strict),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "EmbeddedPostgres", "Primitives", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "EventStoreTests", dependencies: ["EventStore", "LedgerSchema", "Postgres", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "AppStoreTests",
            dependencies: ["AppStore", "AppStoreClient", "Primitives", .product(name: "Crypto", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AppleSimulatorTests",
            dependencies: ["AppleSimulator", "AppStore", "AppStoreClient", "TestSupport", "Primitives", .product(name: "JWTKit", package: "jwt-kit"), .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "Spawning", "Postgres", "EventStore", "Ledger", "LedgerStore", "Sealing"], swiftSettings: strict),
        .testTarget(name: "LedgerTests", dependencies: ["Ledger", "AppStore", "Primitives"], swiftSettings: strict),
        // The rules above, held: reads Package.swift and the sources as text, so it depends on
        // no module of ours (Tests/ArchitectureTests).
        .testTarget(name: "ArchitectureTests", swiftSettings: strict),
        .testTarget(
            name: "LedgerWebhooksTests",
            dependencies: ["LedgerWebhooks", "Ledger", "TestSupport", "Spawning", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerHTTPTests",
            dependencies: [
                "LedgerHTTP", "LedgerConsole", "LedgerWorkers", "LedgerWebhooks", "LedgerQueries", "LedgerProjections", "LedgerService", "LedgerStore", "Ledger", "EventStore", "Postgres", "AppStore", "AppStoreClient", "AppleSimulator", "TestSupport", "Spawning", "EmbeddedPostgres", "Primitives", "Sealing",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6],
    // C23, for CBuildInfo's #embed of the VERSION file.
    cLanguageStandard: .gnu2x
)
