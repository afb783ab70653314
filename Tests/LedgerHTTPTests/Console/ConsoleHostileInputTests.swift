import Foundation
import Ledger
@testable import LedgerConsole
@testable import LedgerQueries
import Testing

/// Ids a customer, Apple or an App Store Connect file can choose (`<`, quotes, `&`, `#`, `%`,
/// formulas, `/`, `?x=y`) through every console page and download: shown as text, put into
/// links percent-encoded, and never a formula in a CSV.
@Suite struct ConsoleHostileInputTests {
    static let hostile = [
        "<", "\"", "&", "#", "%", "=HYPERLINK(\"x\")", "+1", "-1", "@SUM(1)", "a/b", "?x=y", "<script>alert(1)</script>",
        // A quote and a combining mark are one Swift Character: an escaper that compares
        // characters writes the quote raw, and the rest lands in the tag as an attribute.
        "\"\u{301} onmouseover=alert(1) x=",
    ]

    /// The hostile values the API takes as user ids (printable ASCII).
    static let hostileUsers = hostile.filter { $0.unicodeScalars.allSatisfy(\.isASCII) }

    /// As Mustache writes text into HTML.
    static func html(_ text: String) -> String { ConsoleHTML.escape(text) }

    /// As a link must carry an id in a query value: all but RFC 3986's unreserved characters
    /// percent-encoded (written here with Foundation, the console's own encoder aside).
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))!
    }

    /// Nothing hostile came out as markup or as a raw link.
    static func expectNoMarkup(_ body: String, _ page: String) {
        #expect(!body.contains("<script"), "raw <script on \(page)")
        #expect(!body.contains("=HYPERLINK(\"x\")"), "raw quote on \(page)")
        #expect(!Array(body.utf8).containsQuoteBeforeCombiningMark, "a raw quote before a combining mark on \(page)")
        #expect(!body.contains("href=\"/console/lookup?q=<"), "raw id in a link on \(page)")
        #expect(!body.contains("q=?x=y"), "an unencoded query in a link on \(page)")
    }

    @Test("hostile user ids, a hostile report and hostile query values come out escaped on every page and download")
    func hostileValuesThroughEveryPage() async throws {
        try await LedgerHarness.with { ledger in
            for (index, user) in Self.hostileUsers.enumerated() {
                let (_, purchase) = try await ledger.orderAndBuy(user: user, product: "com.example.pro.monthly", appleId: "apple-hostile-\(index)")
                #expect(try await ledger.submit(user: user, purchase: purchase).outcome == "delivered", "\(user)")
            }
            let (_, coins) = try await ledger.orderAndBuy(user: "hostile-coins", product: "com.example.coins100", appleId: "apple-hostile-coins")
            #expect(try await ledger.submit(user: "hostile-coins", purchase: coins).outcome == "delivered")
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)

            // Subscriptions: each user's link carries the handle the log records for them (no id
            // in a URL, docs/erasure.md), its text the id escaped.
            let list = try await browser.get("/console/subscriptions?environment=Production&list=active")
            #expect(list.status == 200)
            Self.expectNoMarkup(list.body, "subscriptions")
            for user in Self.hostileUsers {
                let handle = try await ledger.recorded(user)
                #expect(list.body.contains("<a href=\"/console/lookup?q=\(handle)\">\(Self.html(user))</a>"), "\(user) on subscriptions")
                #expect(try await browser.get("/console/lookup?q=\(handle)").body.contains("<h2>user \(Self.html(user))</h2>"), "\(user) by its link")
            }

            // Look-up: each link above finds its user, shown as text.
            for user in Self.hostileUsers {
                let page = try await browser.get("/console/lookup?q=\(Self.encoded(user))")
                #expect(page.status == 200, "\(user)")
                #expect(page.body.contains("<h2>user \(Self.html(user))</h2>"), "\(user) on look-up")
                #expect(page.body.contains("value=\"\(Self.html(user))\""))
                Self.expectNoMarkup(page.body, "look-up \(user)")
            }

            // Searched text that finds nothing goes back into the search box's value attribute.
            for text in Self.hostile where !Self.hostileUsers.contains(text) {
                let page = try await browser.get("/console/lookup?q=\(Self.encoded(text))")
                #expect(page.status == 200, "\(text)")
                #expect(page.body.contains("value=\"\(Self.html(text))\""), "\(text) in the search box")
                Self.expectNoMarkup(page.body, "look-up of \(text)")
            }

            // Revenue and its downloads; hostile query values are refused as text.
            let day = RevenueDay.of(ledger.simulator.nowMilliseconds)
            for path in ["/console/revenue", "/console/revenue.csv", "/console/revenue.json"] {
                let page = try await browser.get("\(path)?from=\(day)&to=\(day)&group_by=product&environment=Production")
                #expect(page.status == 200, "\(path)")
                Self.expectNoMarkup(page.body, path)
            }
            let csv = try await browser.get("/console/revenue.csv?from=\(day)&to=\(day)&group_by=product&environment=Production")
            for line in csv.body.split(separator: "\r\n") {
                #expect(!["=", "+", "-", "@"].contains(line.first.map(String.init) ?? ""), "a formula cell: \(line)")
            }
            for value in Self.hostile {
                for path in ["/console/revenue", "/console/revenue.csv", "/console/revenue.json"] {
                    let bad = try await browser.get("\(path)?from=\(Self.encoded(value))&group_by=product")
                    #expect(bad.status == 400, "\(path) from=\(value)")
                    Self.expectNoMarkup(bad.body, "\(path) from=\(value)")
                    let grouping = try await browser.get("\(path)?group_by=\(Self.encoded(value))")
                    #expect(grouping.status == 400, "\(path) group_by=\(value)")
                    Self.expectNoMarkup(grouping.body, "\(path) group_by=\(value)")
                }
            }

            // Reconciliation: Apple's report names a product `<script>…` and the file is named
            // with markup; both are text on the list and on the report's page.
            let hostileSKU = "<script>alert(1)</script>"
            let report = try ledger.simulator.salesSummaryReport(day: PacificDay.of(ledger.simulator.nowMilliseconds))
                .replacingOccurrences(of: "com.example.coins100", with: hostileSKU)
            let csrf = try #require(ConsoleClient.hidden("csrf", in: try await browser.get("/console/reconciliation").body))
            let uploaded = try await browser.postFile(
                "/console/reconciliation", field: "report", fileName: "<b>report</b>.txt", bytes: Array(report.utf8), fields: [("csrf", csrf)])
            #expect(uploaded.status == 303)
            let location = try #require(uploaded.header("Location"))
            let result = try await browser.get(location)
            #expect(result.status == 200)
            #expect(result.body.contains(Self.html(hostileSKU)))
            #expect(result.body.contains(Self.html("<b>report</b>.txt")))
            Self.expectNoMarkup(result.body, "reconciliation report")
            #expect(result.body.contains("href=\"/console/lookup?q=\(coins.transactionId)\""))
            let reports = try await browser.get("/console/reconciliation")
            #expect(reports.body.contains(Self.html("<b>report</b>.txt")))
            #expect(!reports.body.contains("<b>report"))
        }
    }

    @Test("text cells that would start a formula are prefixed with a quote; figures stay numbers")
    func csvGuardsFormulas() throws {
        let query = try RevenueQuery(from: "2026-01-01", to: "2026-01-31", groupBy: .product)
        var rows = Self.hostile.map {
            RevenueRow(key: $0, currency: "USD", purchases: 1, refunds: 1, grossMinor: 100, refundedMinor: 250, netMinor: -150, commissionMinor: 30, proceedsMinor: 70)
        }
        rows.append(RevenueRow(
            key: "com.example.coins100", currency: "=HYPERLINK(\"http://x\")", purchases: 1, refunds: 0, grossMinor: 99, refundedMinor: 0, netMinor: 99,
            commissionMinor: 30, proceedsMinor: 69))
        rows.append(RevenueRow(
            key: "\tTAB", currency: "USD", purchases: 1, refunds: 0, grossMinor: 99, refundedMinor: 0, netMinor: 99, commissionMinor: 30, proceedsMinor: 69))
        let lines = RevenueReport(query: query, rows: rows).csv.components(separatedBy: "\r\n")
        #expect(lines[0] == "product,currency,purchases,refunds,gross,refunded,net,commission,proceeds,tax,proceeds_estimated,bundle_id")
        #expect(lines.contains("<,USD,1,1,1.00,2.50,-1.50,0.30,0.70,0.00,false,"), "a negative figure stays a number")
        #expect(lines.contains("\"'=HYPERLINK(\"\"x\"\")\",USD,1,1,1.00,2.50,-1.50,0.30,0.70,0.00,false,"), "quoted after the guard: \(lines)")
        #expect(lines.contains("'+1,USD,1,1,1.00,2.50,-1.50,0.30,0.70,0.00,false,"))
        #expect(lines.contains("'-1,USD,1,1,1.00,2.50,-1.50,0.30,0.70,0.00,false,"))
        #expect(lines.contains("'@SUM(1),USD,1,1,1.00,2.50,-1.50,0.30,0.70,0.00,false,"))
        #expect(lines.contains("'\tTAB,USD,1,0,0.99,0.00,0.99,0.30,0.69,0.00,false,"))
        #expect(lines.contains("\"\"\"\",USD,1,1,1.00,2.50,-1.50,0.30,0.70,0.00,false,"), "a lone quote is quoted and doubled")
        #expect(lines.contains("com.example.coins100,\"'=HYPERLINK(\"\"http://x\"\")\",1,0,0.99,0.00,0.99,0.30,0.69,0.00,false,"))
        #expect(lines.contains("total,\"'=HYPERLINK(\"\"http://x\"\")\",1,0,0.99,0.00,0.99,0.30,0.69,0.00,false,"))
        for line in lines.dropFirst() where !line.isEmpty {
            #expect(!["=", "+", "-", "@", "\t", "\r"].contains(line.first!), "\(line)")
        }
    }

    @Test("links percent-encode ids for their place")
    func linksEncodeIds() {
        #expect(ConsoleLinks.lookup("?x=y") == "/console/lookup?q=%3Fx%3Dy")
        #expect(ConsoleLinks.lookup("a b+c&d#e%", as: "user") == "/console/lookup?q=a%20b%2Bc%26d%23e%25&as=user")
        #expect(ConsoleLinks.lookup("<\"'>") == "/console/lookup?q=%3C%22%27%3E")
        #expect(ConsoleLinks.lookup("é") == "/console/lookup?q=%C3%A9")
        #expect(ConsoleLinks.document("a/b") == "/console/documents/a%2Fb")
        #expect(ConsoleLinks.reconciliation("../x") == "/console/reconciliation/..%2Fx")
        #expect(ConsoleLinks.lookup("Az09-._~") == "/console/lookup?q=Az09-._~")
    }

    @Test("templates take links as ready values and write no unescaped value but the charts")
    func templatesBuildNoLinks() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/LedgerConsole/Templates")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".mustache") }
        #expect(names.count >= 9)
        for name in names {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            for attribute in ["href=\"", "action=\"", "src=\""] {
                var rest = text[...]
                while let start = rest.range(of: attribute) {
                    let value = rest[start.upperBound...].prefix { $0 != "\"" }
                    rest = rest[start.upperBound...]
                    guard value.contains("{{") else { continue }
                    let ready = value.hasPrefix("{{") && value.hasSuffix("}}") && value.dropFirst(2).dropLast(2).allSatisfy { $0.isLetter }
                        && (value == "{{href}}" || value.hasSuffix("Href}}"))
                    #expect(ready, "\(name): \(attribute)\(value)\" builds a link in the template")
                }
            }
            #expect(text.hasPrefix("{{% CONTENT_TYPE: CONSOLE_HTML}}"), "\(name) escapes with Mustache's own escaper, not the console's")
            let unescaped = text.components(separatedBy: "{{{").count - 1
            // The revenue, MRR and refunds pages' charts and the look-up's long tables are built
            // (and escaped) in Swift: RevenueChart, HistoryCharts, LookupTablesHTML.
            let allowed = ["revenue.mustache": ["{{{.}}}"], "mrr.mustache": ["{{{.}}}"], "refunds.mustache": ["{{{.}}}"], "lookup.mustache": ["{{{entitlementRows}}}", "{{{ownerships}}}", "{{{timelineRows}}}"]][name] ?? []
            #expect(unescaped == allowed.count && allowed.allSatisfy(text.contains), "\(name) writes \(unescaped) values unescaped")
        }
    }

    @Test("the revenue table and chart show hostile product ids and currencies as text")
    func revenueRendersHostileKeys() async throws {
        let renderer = try await ConsoleRenderer()
        let rows = Self.hostile.map {
            RevenueRow(key: $0, currency: "USD", purchases: 1, refunds: 0, grossMinor: 100, refundedMinor: 0, netMinor: 100, commissionMinor: 30, proceedsMinor: 70)
        }
        let chart = RevenueChart(rows: rows, currency: "<b>USD</b>", grouping: .product).svg
        #expect(!chart.contains("<script") && !chart.contains("<b>"))
        let html = try #require(renderer.library.render(ConsoleRenderer.withPresence([
            "title": "Revenue", "groupBy": "product", "columns": RevenueReport.csvColumns, "charts": [chart],
            "rows": rows.map { ["key": $0.key, "currency": $0.currency, "cells": $0.cells, "total": false] as [String: Any] },
            "csvHref": ConsoleLinks.query([("group_by", "product")]), "jsonHref": "",
        ]), withTemplate: "revenue"))
        Self.expectNoMarkup(html, "revenue template")
        for key in Self.hostile {
            #expect(html.contains("<td>\(Self.html(key))</td>"), "\(key)")
        }
    }

    @Test("the finance-over-time charts show hostile periods, amounts and links as text")
    func historyChartsEscapeEverything() {
        let points = Self.hostile.map { HistoryCharts.Point(label: $0, value: 3, text: $0, href: "/console/mrr" + ConsoleLinks.query([("period", $0)])) }
        let line = HistoryCharts.line(points, title: "<b>MRR</b>", cssClass: "mrr", maxLabel: { _ in "<i>" })
        let stacked = HistoryCharts.stacked(
            points.map { HistoryCharts.Stack(label: $0.label, up: [("new", $0)], down: [("churn", $0)]) }, title: "<b>x</b>", maxLabel: { _ in "<i>" })
        for svg in [line, stacked] {
            Self.expectNoMarkup(svg, "chart")
            #expect(!svg.contains("<b>") && !svg.contains("<i>") && !svg.contains("<script"))
            for text in Self.hostile { #expect(svg.contains(Self.html(text)), "\(text)") }
        }
    }

    @Test("the look-up's tables, written in Swift, show hostile values in every field as text")
    func lookupTablesEscapeEveryField() {
        let document = String(repeating: "ab", count: 32)
        let entries = Self.hostile.enumerated().map { index, text in
            TimelineView.Entry(
                position: Int64(index + 1), recordedAt: text, type: text, stream: "user:" + text, summary: text,
                data: .object(["storefront": .string(text), "note": .string(text), "body_sha256": .string(document), "fake_sha256": .string(text)]))
        }
        let html = LookupTablesHTML.timelineRows(entries)
        Self.expectNoMarkup(html, "timeline rows")
        #expect(html.components(separatedBy: "<tr class=\"entry\">").count - 1 == Self.hostile.count)
        for text in Self.hostile {
            #expect(html.contains("<td>\(Self.html(text))</td>"), "recorded at \(text)")
            #expect(html.contains("<span class=\"muted\">user:\(Self.html(text))</span>"), "stream \(text)")
        }
        // Only a 64-hex-digit value under a sha256 key is a link to a document.
        #expect(html.components(separatedBy: "class=\"evidence\"").count - 1 == Self.hostile.count)
        #expect(html.contains("href=\"/console/documents/\(document)\" title=\"sha256 \(document)\"><code>\(document.prefix(12))…</code>"))

        let entitlements = LookupTablesHTML.entitlementRows(Self.hostile.map {
            UserView.Entitlement(productId: $0, originalTransactionId: $0, kind: $0, active: true, expiresAt: $0, bundleId: $0)
        })
        Self.expectNoMarkup(entitlements, "entitlement rows")
        let ownerships = LookupTablesHTML.ownerships(Self.hostile.map { text in
            OwnershipView(originalTransactionId: text, bundleId: text, productId: text, ownerUserId: text, appleAccount: text, history: [
                OwnershipView.Change(position: 7, recordedAt: text, userId: text, reason: text),
            ])
        })
        Self.expectNoMarkup(ownerships, "ownerships")
        for text in Self.hostile {
            #expect(entitlements.contains(
                "<tr><td>\(Self.html(text))</td><td>\(Self.html(text))</td><td><a href=\"/console/lookup?q=\(Self.encoded(text))\">\(Self.html(text))</a>"),
                "\(text)")
            #expect(ownerships.contains(
                "<p><strong>\(Self.html(text))</strong> (\(Self.html(text)), \(Self.html(text))) owned by <strong>\(Self.html(text))</strong>"), "\(text)")
            #expect(ownerships.contains("<td>\(Self.html(text))</td><td>\(Self.html(text))</td></tr>"), "\(text)")
        }
    }
}

extension Array where Element == UInt8 {
    /// `"` followed by U+0301's UTF-8 (CC 81): what a per-character escaper leaves raw.
    var containsQuoteBeforeCombiningMark: Bool {
        guard count >= 3 else { return false }
        return (0..<count - 2).contains { self[$0] == UInt8(ascii: "\"") && self[$0 + 1] == 0xCC && self[$0 + 2] == 0x81 }
    }
}
