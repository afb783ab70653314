import EventStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerStore
import Postgres
import Spawning
import TestSupport
import Testing

extension ResilienceTests {
    @Test(
        "SIGTERM in the middle of purchases, as systemd stops the unit: READY=1 once serving, STOPPING=1 at the signal, every request it had accepted answered 200, exit 0 within 30 s; after a restart every purchase is delivered exactly once",
        .timeLimit(.minutes(5)))
    func terminatedUnderLoad() async throws {
        let count = 120
        try await TestDatabase.withSchema { conninfo, pool in
            _ = try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            try await ServedFixture.with(conninfo: conninfo) { fixture in
                let port = try LoopbackPort.freeOutsideEphemeralRange()
                let arguments = ["serve", "--address", "127.0.0.1:\(port)"]
                let notify = try NotifySocket()
                let first = try fixture.start(arguments, extra: ["NOTIFY_SOCKET": notify.path])
                var heard: [String] = []
                try await waitUntil("serve sends READY=1", within: .seconds(60)) {
                    heard += notify.received()
                    if let exit = first.exit { throw HarnessError("serve ended (\(exit)) before READY=1:\n\(first.outputTail())") }
                    return heard.contains { $0.split(separator: "\n").contains("READY=1") }
                }
                let client = fixture.client(port: port)
                // READY=1 means listening: the first call is answered, no retry needed.
                let health = try await client.request(.GET, "/healthz", token: nil)
                #expect(health.status == 200, "healthz right after READY=1: \(health.status)")
                let bought = try await Self.buy(count, client: client, simulator: fixture.apple.simulator)

                // 8 clients; the one that gets answer number count/3 sends SIGTERM.
                let run = KillRun(count: count)
                await run.submit(bought, through: client) { first.send(SIGTERM) }
                // The signal went before the last answers came: 30 s from here bounds it from above.
                let stopped = try await first.waitForExit(within: .seconds(30))
                #expect(stopped == ProcessExit(status: 0, signaled: false), "exit after SIGTERM:\n\(first.outputTail())")
                heard += notify.received()
                #expect(heard.contains { $0.split(separator: "\n").contains("STOPPING=1") }, "notifications: \(heard)")
                let before = run.snapshot
                #expect(before.errorsBeforeKill.isEmpty, "requests failed before SIGTERM: \(before.errorsBeforeKill.prefix(5))")
                // Whatever the server answered, before or after the signal, it answered in full.
                for (index, answer) in before.answered {
                    #expect(
                        answer.status == 200 && answer.outcome == "delivered" && answer.transactionIds.contains(bought[index].purchase.transactionId),
                        "purchase \(index) before the restart: \(answer)")
                }

                let second = try fixture.start(arguments)
                let again = fixture.client(port: port)
                try await second.waitUntilHealthy(again)
                let resubmit = (0..<count).filter { before.answered[$0]?.status != 200 }
                let answers = await Self.submitAll(resubmit, bought: bought, client: again)
                for index in resubmit {
                    guard case .success(let answer) = answers[index] else {
                        Issue.record("purchase \(index) after the restart: \(String(describing: answers[index]))")
                        continue
                    }
                    #expect(
                        answer.status == 200 && ["delivered", "already_delivered"].contains(answer.outcome ?? ""),
                        "purchase \(index) after the restart: \(answer)")
                }
                let totals: (distinct: Int64, total: Int64) = try await pool.withConnection { connection in
                    let row = try connection.query(
                        "SELECT count(DISTINCT payload->>'transaction_id'), count(*) FROM events WHERE event_type = 'PurchaseDelivered'")[0]
                    return try (distinct: row.decode(0, as: Int64.self), total: row.decode(1, as: Int64.self))
                }
                #expect(totals.distinct == Int64(count) && totals.total == Int64(count), "delivered: \(totals)")
                second.send(SIGTERM)
                #expect(try await second.waitForExit(within: .seconds(30)) == ProcessExit(status: 0, signaled: false))
            }
        }
    }
}
