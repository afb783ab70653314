import AppStoreClient
import AppleSimulator
import EventStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Postgres
import Spawning
import TestSupport
import Testing

/// A rolling upgrade as docs/operate.md tells it: `migrate` once with the new release, then
/// servers replaced one at a time, so for a while the previous release serves beside this one on
/// a database this one migrated. Tools/test builds the previous release from the commit
/// CHANGELOG.md names for it (Tools/lib/previous-release.sh) and passes its binary in
/// `PL_PREVIOUS_RELEASE_BIN`; without it the test fails rather than pass untested.
@Suite("Rolling upgrade from the previous release", .timeLimit(.minutes(10)))
struct UpgradeTests {
    static var previous: URL {
        get throws {
            guard let path = ProcessInfo.processInfo.environment["PL_PREVIOUS_RELEASE_BIN"], !path.isEmpty,
                  FileManager.default.isExecutableFile(atPath: path)
            else {
                throw HarnessError("PL_PREVIOUS_RELEASE_BIN names no binary: Tools/test builds the previous release (Tools/lib/previous-release.sh)")
            }
            return URL(fileURLWithPath: path)
        }
    }

    /// The previous release's `ledger-demo` (`PL_PREVIOUS_RELEASE_DEMO`), from 0.5.0 on; nil
    /// for a release whose `purchase-ledger demo` played it.
    static var previousDemo: URL? {
        ProcessInfo.processInfo.environment["PL_PREVIOUS_RELEASE_DEMO"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
    }

    @Test(
        "A database the previous release made, with its demo's history, is migrated by this release; verify passes with both; both releases then serve purchases side by side, each one's orders paid through the other, and nothing is lost")
    func previousReleaseServesBeside() async throws {
        let previous = try Self.previous
        try await TestDatabase.withSchema { conninfo, pool in
            // The previous release makes the database, as a team's production one was made.
            // Its demo: `purchase-ledger demo` up to 0.4.0, the executable ledger-demo after.
            let (demoBinary, demoArguments) = Self.previousDemo.map { ($0, [String]()) } ?? (previous, ["demo"])
            let demo = try await LedgerProcess.run(demoArguments, environment: ["DATABASE_URL": conninfo], binary: demoBinary, within: .seconds(300))
            #expect(demo.exit == ProcessExit(status: 0, signaled: false), "the previous release's demo:\n\(demo.output.suffix(3_000))")
            let eventsBefore: Int64 = try await pool.withConnection { try $0.query("SELECT count(*) FROM events")[0].decode(0) }
            #expect(eventsBefore > 1_000, "the previous release's demo wrote \(eventsBefore) events")

            let migrated = try await LedgerProcess.run(["migrate"], environment: ["DATABASE_URL": conninfo])
            #expect(migrated.exit == ProcessExit(status: 0, signaled: false), "\(migrated.output)")
            for binary in [previous, LedgerProcess.binary] {
                let verify = try await LedgerProcess.run(["verify"], environment: ["DATABASE_URL": conninfo], binary: binary)
                #expect(verify.exit == ProcessExit(status: 0, signaled: false), "verify by \(binary.path) after the migration:\n\(verify.output)")
            }

            // Ids past the demo's: its simulator counted from the same start.
            var simulated = AppleSimulator.Configuration(machineClock: .system)
            simulated.idOffset = 50_000_000
            try await ServedFixture.with(conninfo: conninfo, simulator: simulated) { fixture in
                var servers: [LedgerProcess] = []
                var clients: [LedgerClient] = []
                for binary in [previous, LedgerProcess.binary] {
                    let port = try LoopbackPort.freeOutsideEphemeralRange()
                    let server = try fixture.start(["serve", "--address", "127.0.0.1:\(port)"], binary: binary)
                    servers.append(server)
                    let client = fixture.client(port: port)
                    clients.append(client)
                    try await server.waitUntilHealthy(client)
                }
                let count = 40
                for index in 0..<count {
                    // The order on one release, the receipt on the other, then read back on both.
                    let ordering = clients[index % 2], paying = clients[(index + 1) % 2]
                    let user = "upgrade-user-\(index)"
                    let order = try await ordering.post("/v1/orders", ["user_id": user, "product_id": "com.example.coins100"])
                    let token = try #require(order.json["app_account_token"] as? String, "order \(index): \(order.status) \(order.json)")
                    let purchase = try await fixture.apple.simulator.purchase(
                        appleId: "upgrade-apple-\(index)", productId: "com.example.coins100", environment: .production,
                        appAccountToken: UUID(uuidString: token))
                    let answer = try await paying.post("/v1/receipts", [
                        "user_id": user, "receipt_data": purchase.receiptData, "transaction_id": purchase.transactionId,
                    ])
                    #expect(answer.status == 200 && answer.outcome == "delivered", "purchase \(index): \(answer.status) \(answer.json)")
                    for client in clients {
                        let view = try await client.request(.GET, "/v1/users/\(user)")
                        let coins = (view.json["balances"] as? [String: any Sendable])?["coins"] as? Int
                        #expect(view.status == 200 && coins == 100, "user \(index) read on \(client.base): \(view.status) \(view.json)")
                    }
                }
                let delivered: Int64 = try await pool.withConnection {
                    try $0.query("SELECT count(*) FROM events WHERE event_type = 'PurchaseDelivered' AND payload->>'user_id' LIKE 'upgrade-user-%'")[0].decode(0)
                }
                #expect(delivered == Int64(count))
                for server in servers {
                    server.send(SIGTERM)
                    #expect(try await server.waitForExit(within: .seconds(30)) == ProcessExit(status: 0, signaled: false), "\(server.outputTail())")
                }
                for binary in [previous, LedgerProcess.binary] {
                    let verify = try await LedgerProcess.run(["verify"], environment: ["DATABASE_URL": conninfo], binary: binary)
                    #expect(verify.exit == ProcessExit(status: 0, signaled: false), "verify by \(binary.path) after both served:\n\(verify.output)")
                }

                // The log the previous release made, replayed by this one: the same figures, each
                // row with the app the log names (docs/several-apps.md).
                let figures: SQL = "SELECT day::text, currency, line_type, sum(gross_minor)::text FROM projection_revenue_lines GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
                func revenue() async throws -> [String] {
                    try await pool.withConnection { connection in
                        try connection.query(figures).map {
                            "\(try $0.decode(0, as: String.self)) \(try $0.decode(1, as: String.self)) \(try $0.decode(2, as: String.self)) "
                                + (try $0.decode(3, as: String.self))
                        }
                    }
                }
                // The live tables at the log's head first: a server stopped by SIGTERM may leave
                // its runner's last pass unapplied, which the rebuild would then hold and they not.
                let caughtUp = try await LedgerProcess.run(["audit", "revenue", "--from", "2000-01-01", "--to", "2100-01-01"], environment: ["DATABASE_URL": conninfo])
                #expect(caughtUp.exit == ProcessExit(status: 0, signaled: false), "\(caughtUp.output)")
                let before = try await revenue()
                let replay = try await LedgerProcess.run(["replay"], environment: ["DATABASE_URL": conninfo])
                #expect(replay.exit == ProcessExit(status: 0, signaled: false), "\(replay.output)")
                #expect(try await revenue() == before)
                #expect(!before.isEmpty)
                let apps: [String?] = try await pool.withConnection { connection in
                    try connection.query("""
                        SELECT DISTINCT bundle_id FROM (SELECT bundle_id FROM projection_revenue_lines UNION ALL SELECT bundle_id FROM projection_entitlements
                        UNION ALL SELECT bundle_id FROM projection_ownership UNION ALL SELECT bundle_id FROM projection_app_balances) a
                        """).map { try $0.decode(0) }
                }
                #expect(apps == ["com.example.app"], "every row names the app the log was recorded for")
            }
        }
    }
}
