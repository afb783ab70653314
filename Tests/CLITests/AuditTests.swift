import Foundation
import TestSupport
import Testing

/// `audit revenue` on the ledger the demo leaves: the same report in three formats.
@Suite("purchase-ledger audit revenue")
struct AuditTests {
    @Test("json, csv and table agree; csv rows add up to its totals; small_business takes 15%; bad dates exit 2")
    func auditFormats() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let demo = try await ToolRun.run(["demo"], databaseURL: conninfo)
            #expect(demo.status == 0, "\(demo.output)")
            let period = ["--from", "2000-01-01", "--to", "2100-12-31", "--group-by", "product"]

            let json = try await ToolRun.run(["audit", "revenue"] + period + ["--format", "json"], databaseURL: conninfo)
            #expect(json.status == 0, "\(json.output)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            let rows = try #require(report["rows"] as? [[String: Any]])
            let totals = try #require(report["totals"] as? [[String: Any]])
            #expect(!rows.isEmpty)
            let gross = try #require(totals.first?["gross_minor"] as? Int)
            let commission = try #require(totals.first?["commission_minor"] as? Int)
            #expect(gross > 0 && commission > 0)

            let csv = try await ToolRun.run(["audit", "revenue"] + period + ["--format", "csv"], databaseURL: conninfo)
            #expect(csv.status == 0, "\(csv.output)")
            let lines = csv.output.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(lines.first == "product,currency,purchases,refunds,gross,refunded,net,commission,proceeds,tax,proceeds_estimated")
            // No price point is read yet: no tax known, every row's proceeds estimated.
            #expect(lines.dropFirst().allSatisfy { $0.hasSuffix(",0.00,true") }, "\(lines)")
            #expect(rows.allSatisfy { $0["tax_minor"] as? Int == 0 && $0["proceeds_estimated"] as? Bool == true })
            #expect(lines.count == 1 + rows.count + totals.count)
            // Cents, summed from the text a spreadsheet reads, equal the JSON's integers.
            func cents(_ text: String) -> Int {
                let parts = text.split(separator: ".")
                let whole = Int(parts[0].replacingOccurrences(of: "-", with: "")) ?? 0
                let value = whole * 100 + (parts.count > 1 ? Int(parts[1]) ?? 0 : 0)
                return text.hasPrefix("-") ? -value : value
            }
            let body = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            let rowGross = body.filter { $0[0] != "total" }.map { cents($0[4]) }.reduce(0, +)
            let totalGross = body.filter { $0[0] == "total" }.map { cents($0[4]) }.reduce(0, +)
            #expect(rowGross == gross && totalGross == gross)

            let table = try await ToolRun.run(["audit", "revenue"] + period, databaseURL: conninfo)
            #expect(table.status == 0, "\(table.output)")
            #expect(table.output.contains("by product, commission standard"))
            #expect(table.output.contains("com.example.coins100"))
            #expect(table.output.split(separator: "\n").contains { $0.hasPrefix("total") })

            let small = try await ToolRun.run(
                ["audit", "revenue"] + period + ["--format", "json"], databaseURL: conninfo, environment: ["LEDGER_COMMISSION": "small_business"])
            let smallReport = try #require(try JSONSerialization.jsonObject(with: Data(small.output.utf8)) as? [String: Any])
            let smallCommission = try #require((smallReport["totals"] as? [[String: Any]])?.first?["commission_minor"] as? Int)
            #expect(smallCommission < commission && smallCommission > 0)

            let bad = try await ToolRun.run(["audit", "revenue", "--from", "2026-13-01", "--to", "2026-12-31"], databaseURL: conninfo)
            #expect(bad.status == 2, "\(bad.output)")
            #expect(bad.output.contains("from must be a date YYYY-MM-DD"))
            let badPlan = try await ToolRun.run(
                ["audit", "revenue"] + period, databaseURL: conninfo, environment: ["LEDGER_COMMISSION": "generous"])
            #expect(badPlan.status == 2, "\(badPlan.output)")
            #expect(badPlan.output.contains("LEDGER_COMMISSION is standard or small_business"))
        }
    }
}
