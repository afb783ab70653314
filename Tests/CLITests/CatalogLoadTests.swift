import Foundation
import Postgres
import TestSupport
import Testing

/// `catalog load` records which app the products are for: named by `--bundle-id`, else the one
/// app configured; a catalog named by nothing is refused, since it would fall to whatever app
/// the log's events without one belong to.
@Suite("purchase-ledger catalog load")
struct CatalogLoadTests {
    @Test("the products are recorded for --bundle-id, else the one app of LEDGER_APPS; with no app named, nothing is recorded")
    func catalogNamesItsApp() async throws {
        try await TemporaryFolder.with("catalog-load") { folder in try await catalogNamesItsApp(in: folder) }
    }

    private func catalogNamesItsApp(in folder: URL) async throws {
        let catalog = folder.appendingPathComponent("catalog.json")
        try Data(#"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}}]}"#.utf8).write(to: catalog)
        let apps = folder.appendingPathComponent("apps.json")
        try Data(#"{"apps": [{"bundle_id": "com.example.reader"}]}"#.utf8).write(to: apps)
        try await TestDatabase.withSchema { conninfo, pool in
            #expect(try await ToolRun.run(["migrate"], databaseURL: conninfo).status == 0)
            let unnamed = try await ToolRun.run(["catalog", "load", catalog.path], databaseURL: conninfo, environment: ["APPLE_BUNDLE_ID": ""])
            #expect(unnamed.status != 0 && unnamed.output.contains("--bundle-id"), "\(unnamed.output)")
            let named = try await ToolRun.run(["catalog", "load", catalog.path, "--bundle-id", "com.example.game"], databaseURL: conninfo)
            #expect(named.status == 0, "\(named.output)")
            let fromApps = try await ToolRun.run(
                ["catalog", "load", catalog.path], databaseURL: conninfo, environment: ["APPLE_BUNDLE_ID": "", "LEDGER_APPS": apps.path])
            #expect(fromApps.status == 0, "\(fromApps.output)")
            let recorded = try await pool.withConnection { connection in
                try connection.query("SELECT payload->>'bundle_id' FROM events WHERE event_type = 'CatalogLoaded' ORDER BY position")
                    .map { try $0.decode(0, as: String.self) }
            }
            #expect(recorded == ["com.example.game", "com.example.reader"])
        }
    }
}
