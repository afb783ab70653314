import Foundation
import TestSupport
import Testing

/// `audit revenue` on the ledger the demo leaves: the same report in three formats.
@Suite("purchase-ledger audit revenue")
struct AuditTests {
    @Test("json, csv and table agree; csv rows add up to its totals; small_business takes 15%; bad dates exit 2")
    func auditFormats() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let demo = try await ToolRun.demo(databaseURL: conninfo)
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
            #expect(lines.first == "product,currency,purchases,refunds,gross,refunded,net,commission,proceeds,tax,proceeds_estimated,bundle_id")
            // The demo reads Apple's price points and asks Get Transaction Info for its receipts'
            // sales: every sale is priced (US prices: no tax), none estimated.
            #expect(lines.dropFirst().allSatisfy { $0.contains(",0.00,false,") }, "\(lines)")
            #expect(rows.allSatisfy { $0["tax_minor"] as? Int == 0 && $0["proceeds_estimated"] as? Bool == false })
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

            // reconcile-reports --format json: a day Apple reports one sale the ledger never saw.
            let header = "Provider\tProvider Country\tSKU\tDeveloper\tTitle\tVersion\tProduct Type Identifier\tUnits\tDeveloper Proceeds\tBegin Date\tEnd Date\tCustomer Currency\tCountry Code\tCurrency of Proceeds\tApple Identifier\tCustomer Price\tPromo Code\tParent Identifier\tSubscription\tPeriod\tCategory\tCMB\tDevice\tSupported Platforms\tProceeds Reason\tPreserved Pricing\tClient\tOrder Type"
            let row = "APPLE\tUS\tcom.example.coins100\tDev\tCoins\t\tIA1\t1\t0.70\t01/15/2020\t01/15/2020\tUSD\tDE\tUSD\t1\t0.99\t\t\t\t\tGames\t\tiPhone\tiOS\t\t\t\t"
            let reportFile = FileManager.default.temporaryDirectory.appendingPathComponent("S_D_20200115-\(UUID().uuidString).txt")
            try Data((header + "\n" + row + "\n").utf8).write(to: reportFile)
            defer { try? FileManager.default.removeItem(at: reportFile) }
            let reconciled = try await ToolRun.run(["reconcile-reports", reportFile.path, "--format", "json"], databaseURL: conninfo)
            #expect(reconciled.status == 1, "a cell differs: \(reconciled.output)")
            let jsonStart = try #require(reconciled.output.firstIndex(of: "{"))
            let result = try #require(try JSONSerialization.jsonObject(with: Data(reconciled.output[jsonStart...].utf8)) as? [String: Any])
            #expect(result["agree"] as? Int == 0 && result["differ"] as? Int == 1)
            let cell = try #require((result["cells"] as? [[String: Any]])?.first)
            #expect(cell["period"] as? String == "2020-01-15" && cell["product_id"] as? String == "com.example.coins100")
            #expect(cell["country"] as? String == "DEU", "Apple's alpha-2 DE, as revenue's alpha-3")
            #expect(cell["type"] as? String == "sale" && cell["currency"] as? String == "USD")
            #expect(cell["apple_units"] as? Int == 1 && cell["ledger_units"] as? Int == 0)
            #expect(cell["apple_proceeds_minor"] as? Int == 70 && cell["ledger_proceeds_minor"] as? Int == 0)
            #expect(cell["proceeds_currency"] as? String == "USD" && cell["agrees"] as? Bool == false)
            #expect((cell["transaction_ids"] as? [Any])?.isEmpty == true)

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
