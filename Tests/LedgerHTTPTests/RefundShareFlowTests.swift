import Foundation
@testable import Ledger
@testable import LedgerProjections
@testable import LedgerQueries
import Postgres
import Testing

/// docs/configuration.md "Money" in PostgreSQL and through Apple's notifications: a refund of a share
/// books that share of the sale, its commission and proceeds in proportion; its reversal gives
/// back exactly what it took; a Family Sharing revocation moves no money.
@Suite("Refunds of a share in money, and revocations that move none")
struct RefundShareFlowTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// A 9.99 USD sale of a pack of coins, at Apple's price.
    static func sale(_ transaction: String) -> RevenueSale {
        RevenueSale(
            transactionId: transaction, originalTransactionId: transaction, productId: "com.example.coins100", kind: .consumable,
            userId: "u1", environment: "Production", purchaseDateMs: start, serviceMs: nil, quantity: 1,
            applePrice: Money(minorUnits: 999, currency: "USD"))
    }

    /// The revenue report's rows for 2026 by product, under the standard commission. (Read on
    /// the pool's thread; the tests expect on their own, where Swift Testing knows the test.)
    static func rows(on connection: Connection) throws -> [RevenueRow] {
        try ReadModels.revenueRows(try RevenueQuery(from: "2026-01-01", to: "2026-12-31", groupBy: .product), legacyApp: "", on: connection)
    }

    @Test("a 25% refund of a 9.99 sale refunds 2.50, and the commission and proceeds in proportion; its reversal gives back exactly that")
    func proratedRefundInMoney() async throws {
        let (refundedRows, reversedRows, lines) = try await LedgerHarness.withMigratedSchema { pool in
            try await pool.withConnection { connection in
                for statement in ProjectionSQL.revenueSales([Self.sale("T1")]) { try connection.execute(statement) }
                for statement in ProjectionSQL.revenueRefund("T1", atMs: Self.start + Self.day, fractionMilli: 25_000) {
                    try connection.execute(statement)
                }
                let refunded = try Self.rows(on: connection)
                for statement in ProjectionSQL.revenueReversal("T1", atMs: Self.start + 2 * Self.day, fractionMilli: 25_000) {
                    try connection.execute(statement)
                }
                let reversed = try Self.rows(on: connection)
                // Each line keeps the share it moves and the sale it is a share of.
                var lines: [String] = []
                for row in try connection.query("""
                    SELECT line_type, gross_minor, fraction_milli, sale_gross_minor FROM projection_revenue_lines ORDER BY line_id
                    """) {
                    let sale = try row.decode(3, as: Int64?.self).map { "\($0)" } ?? "-"
                    lines.append("\(try row.decode(0, as: String.self)) \(try row.decode(1, as: Int64.self)) \(try row.decode(2, as: Int64.self)) \(sale)")
                }
                return (refunded, reversed, lines)
            }
        }
        #expect(refundedRows.count == 1, "\(refundedRows)")
        let refunded = try #require(refundedRows.first)
        #expect(refunded.grossMinor == 999)
        #expect(refunded.refundedMinor == 250, "round half up of 249.75")
        #expect(refunded.netMinor == 749)
        #expect(refunded.refunds == 1)
        // The sale's commission is 3.00 and its proceeds 6.99; the refund pays back a quarter of
        // the proceeds (1.7475, rounded half up to 1.75) and its commission is the rest of its
        // 2.50 (0.75).
        #expect(refunded.commissionMinor == 300 - 75)
        #expect(refunded.proceedsMinor == 699 - 175)

        #expect(reversedRows.count == 1, "\(reversedRows)")
        let reversed = try #require(reversedRows.first)
        #expect(reversed.refunds == 0)
        #expect(reversed.refundedMinor == 0)
        #expect(reversed.netMinor == 999)
        #expect(reversed.commissionMinor == 300)
        #expect(reversed.proceedsMinor == 699)

        #expect(lines == ["refund -250 25000 999", "reversal 250 25000 999", "sale 999 100000 -"])
    }

    @Test("a full refund is still exactly its sale's negative: nothing left in gross, commission or proceeds")
    func fullRefundInMoney() async throws {
        let rows = try await LedgerHarness.withMigratedSchema { pool in
            try await pool.withConnection { connection in
                for statement in ProjectionSQL.revenueSales([Self.sale("T2")]) { try connection.execute(statement) }
                for statement in ProjectionSQL.revenueRefund("T2", atMs: Self.start + Self.day) { try connection.execute(statement) }
                return try Self.rows(on: connection)
            }
        }
        #expect(rows.count == 1, "\(rows)")
        let row = try #require(rows.first)
        #expect(row.refundedMinor == 999)
        #expect(row.netMinor == 0)
        #expect(row.commissionMinor == 0)
        #expect(row.proceedsMinor == 0)
    }

    @Test("Apple's REVOKE (FAMILY_REVOKE) ends the entitlement and moves no money, and the timeline says so")
    func familyRevokeFlow() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-fam", product: "com.example.removeads", appleId: "apple-fam")
            #expect(try await ledger.submit(user: "u-fam", purchase: purchase).outcome == "delivered")
            let before = try await RefundReversedTests.totals(ledger)
            _ = try await ledger.simulator.revoke(transactionId: purchase.transactionId)
            try await ledger.eventually("the revocation is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            guard case .purchaseRefunded(let revoke)? = try await ledger.events("PurchaseRefunded").first else {
                Issue.record("no revocation recorded")
                return
            }
            #expect(revoke.revocation == "revoke")
            #expect(revoke.rawRevocationType == "FAMILY_REVOKE")
            #expect(revoke.refundedFractionMilli == 0)

            let user = try await ledger.get("/v1/users/u-fam")
            #expect((user.json["entitlements"] as? [[String: any Sendable]])?.first?["active"] as? Bool == false)
            let after = try await RefundReversedTests.totals(ledger)
            #expect(after["refunds"] as? Int == 0, "\(after)")
            #expect(after["refunded_minor"] as? Int == 0)
            #expect((after["gross_minor"] as? Int ?? 0) > 0)
            #expect(after["net_minor"] as? Int == before["net_minor"] as? Int)

            let timeline = try await ledger.get("/v1/timelines/transactions/\(purchase.transactionId)", token: LedgerHarness.financeToken)
            let summaries = ((timeline.json["entries"] as? [[String: any Sendable]]) ?? []).compactMap { $0["summary"] as? String }
            #expect(summaries.contains { $0.hasPrefix("Revoked (Family Sharing)") && $0.contains("no money moved") }, "\(summaries)")
        }
    }

    @Test("coins a reversed refund gave back can be spent again")
    func reversedCoinsSpend() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-back", product: "com.example.coins100", appleId: "apple-back")
            #expect(try await ledger.submit(user: "u-back", purchase: purchase).outcome == "delivered")
            _ = try await ledger.simulator.refund(transactionId: purchase.transactionId, reason: 0)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            _ = try await ledger.simulator.reverseRefund(transactionId: purchase.transactionId)
            try await ledger.eventually("the reversal is recorded") { try await ledger.count("RefundReversed") == 1 }
            let spend = try await ledger.post("/v1/users/u-back/spend", ["unit": "coins", "amount": 100, "spend_id": "back-1"])
            #expect(spend.status == 200, "\(spend.json)")
            #expect(spend.json["balance"] as? Int == 0)
        }
    }

    @Test("the timeline says which share was refunded, and when an upgrade or a revocation moved no money")
    func timelineWords() {
        let refund = PurchaseRefunded(
            transactionId: "T1", originalTransactionId: "T1", productId: "com.example.coins100", kind: .consumable, quantity: 1,
            userId: "u1", environment: "Production", grants: ["coins": 100], refundedAtMs: Self.start, reason: 0, revocation: "refund",
            source: "n-1", rawRevocationType: "REFUND_PRORATED", revocationPercentage: 25_000, refundedFractionMilli: 25_000,
            grantsTakenBack: ["coins": 25])
        #expect(TimelineSummary.line(for: .purchaseRefunded(refund), actor: nil)
            == "Refunded by Apple on 2026-01-01T00:00:00.000Z: transaction T1 of user u1, refunded 25% (25 coins taken back), reason: other")
        #expect(TimelineSummary.line(for: .refundReversed(RefundReversed(refund: refund, reversedAtMs: Self.start + Self.day, source: "n-2")), actor: nil)
            == "Apple reversed the 25% refund of transaction T1 on 2026-01-02T00:00:00.000Z: user u1 has it again (25 coins given back)")

        var full = refund
        full.rawRevocationType = nil
        full.revocationPercentage = nil
        full.refundedFractionMilli = nil
        full.grantsTakenBack = nil
        #expect(TimelineSummary.line(for: .purchaseRefunded(full), actor: nil)
            == "Refunded by Apple on 2026-01-01T00:00:00.000Z: transaction T1 of user u1, reason: other", "as before shares were")

        var upgrade = full
        upgrade.kind = .autoRenewable
        upgrade.upgraded = true
        upgrade.refundedFractionMilli = 0
        upgrade.reason = nil
        #expect(TimelineSummary.line(for: .purchaseRefunded(upgrade), actor: nil)
            == "Upgraded on 2026-01-01T00:00:00.000Z: transaction T1 of user u1 ended early for a higher plan, which goes on; Apple gave no refund amount, so no money moved")
        upgrade.refundedFractionMilli = 40_000
        #expect(TimelineSummary.line(for: .purchaseRefunded(upgrade), actor: nil).hasSuffix("; Apple refunded 40% of it"))

        // A notification about no transaction says so, never "transaction ?".
        let consent = AppleNotificationReceived(
            notificationId: "n-3", version: "v2", notificationType: "RESCIND_CONSENT", subtype: nil, environment: "Production",
            transactionId: nil, originalTransactionId: nil, consumptionRequestReason: nil, documentSha256: "00", receivedAtMs: Self.start)
        #expect(TimelineSummary.line(for: .appleNotificationReceived(consent), actor: nil)
            == "Apple sent notification RESCIND_CONSENT (v2), about no transaction")
    }
}
