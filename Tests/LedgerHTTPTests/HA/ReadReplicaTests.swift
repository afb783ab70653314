import Foundation
import Ledger
import Postgres
import TestSupport
import Testing

/// Reads served by the standby (`DATABASE_READ_URL`): a report and a dispute come from it, and
/// a caller who just wrote reads its write through it.
/// (The suite is declared in `HASet`, which keeps it apart from the other suite on the set.)
extension HASet.ReadReplicaTests {
    @Test func reportsAndDisputesFromTheStandbyWithReadYourWrites() async throws {
        try await HACluster.withSchema { conninfo, readConninfo in
            // The read URL lands on a server in recovery: a standby, not the primary.
            let probe = ConnectionPool(conninfo: readConninfo, maxConnections: 1, logger: TestDatabase.logger)
            let inRecovery: Bool = try await probe.withConnection { try $0.query("SELECT pg_is_in_recovery()")[0].decode(0) }
            await probe.close()
            #expect(inRecovery)
            try await LedgerHarness.with(database: conninfo, readDatabase: readConninfo) { ledger in
                let replica = try #require(ledger.server.reads.replica)
                for index in 0..<5 {
                    let user = "rr-u\(index)"
                    let (_, purchase) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-rr-\(index)")
                    #expect(try await ledger.submit(user: user, purchase: purchase).status == 200)
                    // At once, the same caller reads its write back: through the standby, which
                    // the read waited for, never a stale answer.
                    let before = replica.served
                    let read = try await ledger.get("/v1/users/\(user)")
                    #expect(read.status == 200)
                    #expect((read.json["balances"] as? [String: Any])?["coins"] as? Int == 100, "read-your-writes through the standby")
                    #expect(replica.served.replica + replica.served.primary == before.replica + before.primary + 1)
                }
                // A read given its own receipt's position waits for the standby's projections to
                // hold that receipt, checked on the standby itself, not for the primary's head.
                let beforePositionReads = replica.served
                for index in 5..<8 {
                    let user = "rr-u\(index)"
                    let (_, purchase) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-rr-\(index)")
                    let submitted = try await ledger.submit(user: user, purchase: purchase)
                    let position = try #require(submitted.header("X-Ledger-Position"))
                    let read = try await ledger.request(.GET, "/v1/users/\(user)", headers: [("X-Ledger-After", position)])
                    #expect(read.status == 200)
                    #expect((read.json["balances"] as? [String: Any])?["coins"] as? Int == 100, "read-after-position through the standby")
                }
                #expect(replica.served.replica + replica.served.primary == beforePositionReads.replica + beforePositionReads.primary + 3)
                #expect(replica.served.replica > beforePositionReads.replica, "the standby served reads by position (\(replica.served))")
                let fromStandby = replica.served.replica
                #expect(fromStandby >= 1, "reads were served by the standby (\(replica.served))")

                let day = RevenueDay.of(ledger.simulator.nowMilliseconds)
                let report = try await ledger.get("/v1/reports/revenue?from=\(day)&to=\(day)", token: LedgerHarness.financeToken)
                #expect(report.status == 200)
                #expect(((report.json["totals"] as? [[String: Any]])?.first?["purchases"] as? Int) == 8, "the 5 read by the head and the 3 by position")
                let dispute = try await ledger.get("/v1/timelines/users/rr-u0", token: LedgerHarness.supportToken)
                #expect(dispute.status == 200)
                #expect(((dispute.json["chain"] as? [String: Any])?["verified"] as? Bool) == true)
                #expect(replica.served.replica >= fromStandby + 2, "the report and the dispute came from the standby (\(replica.served))")
            }
        }
    }
}
