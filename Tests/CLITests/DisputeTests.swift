import Foundation
import TestSupport
import Testing

/// `dispute ID` on the ledger the demo leaves.
@Suite("purchase-ledger dispute")
struct DisputeTests {
    @Test("a refunded transaction reads as a story with Apple's evidence; json is the API's shape; an unknown id exits 1")
    func disputeStory() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            let demo = try await ToolRun.demo(databaseURL: conninfo)
            #expect(demo.status == 0, "\(demo.output)")
            // The first refund of a purchase the ledger delivered, in log order. An unordered
            // LIMIT 1 took whichever refund the heap gave first: under a loaded CI run that was once
            // a transaction whose timeline holds only its refund's few events.
            let refunded: String = try await pool.withConnection {
                try $0.query("""
                    SELECT r.payload->>'transaction_id' FROM events r
                    WHERE r.event_type = 'PurchaseRefunded'
                      AND EXISTS (SELECT 1 FROM events d WHERE d.event_type = 'PurchaseDelivered'
                                  AND d.payload->>'transaction_id' = r.payload->>'transaction_id')
                    ORDER BY r.position LIMIT 1
                    """)[0].decode(0)
            }
            let story = try await ToolRun.run(["dispute", refunded], databaseURL: conninfo)
            #expect(story.status == 0, "\(story.output)")
            #expect(story.output.hasPrefix("Dispute timeline of transaction \(refunded)"))
            #expect(story.output.contains("Hash chain: verified from the first event"))
            #expect(story.output.contains("Apple's evidence: status 0"))
            #expect(story.output.contains("Delivered 1 × "))
            #expect(story.output.contains("Refunded by Apple on "))

            let json = try await ToolRun.run(["dispute", refunded, "--format", "json"], databaseURL: conninfo)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            #expect(object["subject"] as? String == refunded)
            #expect(((object["chain"] as? [String: Any])?["verified"]) as? Bool == true)
            #expect(((object["entries"] as? [[String: Any]])?.count ?? 0) > 3)

            let unknown = try await ToolRun.run(["dispute", "no-such-id"], databaseURL: conninfo)
            #expect(unknown.status == 1)
            #expect(unknown.output.contains("nothing in the ledger concerns no-such-id"))
        }
    }
}
