import Foundation
import Ledger
@testable import LedgerQueries
import Testing

@testable import LedgerConsole

/// A user of years has hundreds of timeline entries: the look-up's table shows a page of them,
/// with links to the rest, while the chain's verdict still counts them all.
@Suite("console: a long timeline in pages")
struct ConsoleLookupPagingTests {
    static func entries(_ positions: [Int64]) -> [TimelineView.Entry] {
        positions.map { TimelineView.Entry(position: $0, recordedAt: "", type: "OrderCreated", stream: "", summary: "", data: .null) }
    }

    @Test("the newest page first; before a position, the page that ends there")
    func pages() {
        let long = Self.entries((1...250).map { Int64($0 * 3) })
        let per = LookupPage.entriesPerPage
        #expect(LookupPage.page(of: long.map(\.position), before: nil) == (250 - per)..<250)
        #expect(LookupPage.page(of: long.map(\.position), before: long[150].position) == (150 - per)..<150)
        #expect(LookupPage.page(of: long.map(\.position), before: long[150].position - 1) == (150 - per)..<150, "between two entries")
        #expect(LookupPage.page(of: long.map(\.position), before: long[40].position) == 0..<40)
        #expect(LookupPage.page(of: long.map(\.position), before: 1) == 0..<0)
        #expect(LookupPage.page(of: long.map(\.position), before: 10_000) == (250 - per)..<250)
        let short = Self.entries([5, 9, 12])
        #expect(LookupPage.page(of: short.map(\.position), before: nil) == 0..<3)
    }

    @Test("read for a page, the entries it shows are those of the whole timeline, Apple's evidence and all; the others are not parsed but still say which transactions they concern")
    func readForAPage() async throws {
        try await LedgerHarness.with { ledger in
            for index in 0..<6 {
                let (_, purchase) = try await ledger.orderAndBuy(user: "u-page", product: "com.example.coins100", appleId: "apple-page-\(index)")
                #expect(try await ledger.submit(user: "u-page", purchase: purchase).outcome == "delivered")
            }
            #expect(try await ledger.post("/v1/users/u-page/spend", ["unit": "coins", "amount": 10, "spend_id": "page-s1"]).status == 200)
            let person = try await ledger.recorded("u-page")
            let whole = try #require(try await ledger.server.reads.timeline(.user, person))
            // The last eight entries and the spends, as the look-up asks.
            let paged = try #require(try await ledger.server.reads.timeline(.user, person, shown: { positions, types in
                Set(positions.indices.suffix(8)).union(types.indices.filter { LookupPage.listedApart(types[$0]) })
            }))
            #expect(paged.entries.count == whole.entries.count && paged.verified == whole.verified && paged.headHash == whole.headHash)
            #expect(whole.entries.contains { $0.type == "AppleResponded" } && whole.entries.count > 8)
            var withEvidence = 0, named = 0
            for (index, (full, read)) in zip(whole.entries, paged.entries).enumerated() {
                if index >= whole.entries.count - 8 || read.type == "BalanceSpent" {
                    #expect(read == full, "entry \(index), \(full.type), read in full")
                    if case .object(let data) = read.data, data["apple_evidence"] != nil { withEvidence += 1 }
                } else {
                    #expect(read.summary.isEmpty, "entry \(index) not shown: no summary")
                    #expect(read.position == full.position && read.type == full.type && read.stream == full.stream && read.recordedAt == full.recordedAt)
                    #expect(read.data == .null, "entry \(index) not shown: its payload not parsed")
                }
                // Every entry, shown or not, names its transactions as its payload does.
                guard case .object(let data) = full.data else { Issue.record("entry \(index) has no payload"); continue }
                #expect(read.transactionId == data["transaction_id"]?.stringValue && full.transactionId == read.transactionId, "entry \(index)")
                #expect(read.originalTransactionId == data["original_transaction_id"]?.stringValue && full.originalTransactionId == read.originalTransactionId)
                if full.type == "PurchaseDelivered" { named += 1; #expect(read.transactionId != nil && read.originalTransactionId != nil) }
            }
            #expect(withEvidence > 0, "an Apple answer among the shown entries carries its evidence")
            #expect(named == 6, "each delivery names its transaction")
        }
    }

    @Test("a user with more entries than a page: the newest page, a link to the earlier ones and back; the chain counts them all")
    func longUser() async throws {
        try await LedgerHarness.with { ledger in
            for index in 0..<16 {
                let (_, purchase) = try await ledger.orderAndBuy(user: "u-long", product: "com.example.coins100", appleId: "apple-long-\(index)")
                #expect(try await ledger.submit(user: "u-long", purchase: purchase).outcome == "delivered")
            }
            let timeline = try await ledger.get("/v1/timelines/users/u-long", token: LedgerHarness.supportToken)
            let all = (timeline.json["entries"] as? [[String: any Sendable]] ?? []).compactMap { $0["position"] as? Int }
            #expect(all.count > LookupPage.entriesPerPage && all.count <= 2 * LookupPage.entriesPerPage, "\(all.count) entries")

            let support = ConsoleClient(base: ledger.base)
            defer { Task { await support.shutdown() } }
            #expect(try await support.signIn(LedgerHarness.supportToken).status == 303)
            func rows(_ html: String) -> [String] {
                html.components(separatedBy: "<tr class=\"entry\"><td class=\"num\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
            }
            let newest = try await support.get("/console/lookup?q=u-long")
            #expect(newest.status == 200)
            #expect(rows(newest.body) == all.suffix(LookupPage.entriesPerPage).map { String($0) })
            #expect(newest.body.contains("for these \(all.count) events"))
            #expect(newest.body.contains("Entries \(all.count - LookupPage.entriesPerPage + 1) to \(all.count) of \(all.count)"))
            #expect(!newest.body.contains("id=\"later\""))
            let earlierHref = try #require(Self.href("earlier", in: newest.body))
            // The link carries the handle the log records for the user, never the id (docs/erasure.md).
            let uLong = try await ledger.recorded("u-long")
            #expect(earlierHref == "/console/lookup?q=\(uLong)&amp;as=user&amp;before=\(all[all.count - LookupPage.entriesPerPage])")

            let earlier = try await support.get(earlierHref.replacingOccurrences(of: "&amp;", with: "&"))
            #expect(earlier.status == 200)
            #expect(rows(earlier.body) == all.prefix(all.count - LookupPage.entriesPerPage).map { String($0) })
            #expect(!earlier.body.contains("id=\"earlier\""))
            #expect(Self.href("later", in: earlier.body) == "/console/lookup?q=\(uLong)&amp;as=user")

            #expect(try await support.get("/console/lookup?q=u-long&before=x").status == 400)
            #expect(try await support.get("/console/lookup?q=u-long&before=-3").status == 400)
        }
    }

    /// The `href` of the link with `id`.
    static func href(_ id: String, in html: String) -> String? {
        guard let end = html.range(of: "\" id=\"\(id)\"") else { return nil }
        let before = html[..<end.lowerBound]
        guard let open = before.range(of: "<a href=\"", options: .backwards) else { return nil }
        return String(before[open.upperBound...])
    }
}
