import Ledger
import LedgerQueries

/// The look-up's long tables, written here rather than by the template: the timeline's rows,
/// the user's entitlements and the ownership of each purchase. Mustache finds each `{{x}}`
/// through the context stack with half a dozen dynamic casts, and the ten of them in each of a
/// user's 100 timeline rows were a quarter of the page's CPU (perf, docs/benchmarks.md 2026-11-27
/// afternoon); with those gone, the 61 entitlements and 20 ownerships of the same user were
/// still a sixth. Every value goes through `ConsoleHTML.escape`, exactly as `{{x}}` would:
/// these are the only places the look-up writes markup itself, and `ConsoleHostileInputTests`
/// holds them to that.
enum LookupTablesHTML {
    static func timelineRows(_ entries: some Collection<TimelineView.Entry>) -> String {
        var html = ""
        html.reserveCapacity(entries.count * 1_500)
        for entry in entries {
            html += #"<tr class="entry"><td class="num">"#
            html += String(entry.position)
            html += "</td><td>" + ConsoleHTML.escape(entry.recordedAt)
            html += "</td><td>" + ConsoleHTML.escape(entry.type)
            html += #"<br><span class="muted">"# + ConsoleHTML.escape(entry.stream) + "</span></td>\n"
            html += #"<td class="country">"# + ConsoleHTML.escape(country(of: entry))
            html += "</td><td>" + ConsoleHTML.escape(entry.summary)
            html += "<details><summary>event data</summary><pre>" + ConsoleHTML.escape(EvidenceDocument.pretty(entry.data))
            html += "</pre></details></td>\n<td>"
            for name in EvidenceDocument.documentNames(in: entry.data) {
                html += #"<a class="evidence" href=""# + ConsoleHTML.escape(ConsoleLinks.document(name))
                html += #"" title="sha256 "# + ConsoleHTML.escape(name)
                html += #""><code>"# + ConsoleHTML.escape(String(name.prefix(12)) + "…") + "</code></a><br>"
            }
            html += "</td></tr>\n"
        }
        return html
    }

    /// The storefront the event recorded (a delivery, a renewal, Apple's Get Transaction Info),
    /// empty for the others.
    static func country(of entry: TimelineView.Entry) -> String {
        guard case .object(let data) = entry.data else { return "" }
        return Storefront.countryCode(data["storefront"]?.stringValue) ?? ""
    }

    static func entitlementRows(_ entitlements: [UserView.Entitlement]) -> String {
        var html = ""
        html.reserveCapacity(entitlements.count * 250)
        for e in entitlements {
            html += "<tr><td>" + ConsoleHTML.escape(e.bundleId) + "</td><td>" + ConsoleHTML.escape(e.productId)
            html += #"</td><td><a href=""# + ConsoleHTML.escape(ConsoleLinks.lookup(e.originalTransactionId)) + #"">"#
            html += ConsoleHTML.escape(e.originalTransactionId) + "</a></td><td>" + ConsoleHTML.escape(e.kind)
            html += "</td><td>" + (e.active ? "true" : "false") + "</td><td>" + ConsoleHTML.escape(e.expiresAt ?? "") + "</td></tr>"
        }
        return html
    }

    /// Each purchase's holder, then every change of holder.
    static func ownerships(_ views: [OwnershipView]) -> String {
        var html = ""
        html.reserveCapacity(views.count * 600)
        for view in views {
            html += "<p><strong>" + ConsoleHTML.escape(view.originalTransactionId) + "</strong> ("
            html += ConsoleHTML.escape(view.productId) + ", " + ConsoleHTML.escape(view.bundleId) + ") owned by <strong>" + ConsoleHTML.escape(view.ownerUserId ?? "nobody") + "</strong>"
            if let account = view.appleAccount, !account.isEmpty {
                html += #" · Apple account <span class="tag">"# + ConsoleHTML.escape(account) + "</span>"
            }
            html += "</p>\n"
            html += #"<table><thead><tr><th class="num">position</th><th>recorded</th><th>user</th><th>reason</th></tr></thead><tbody>"#
            for change in view.history {
                html += #"<tr><td class="num">"# + String(change.position) + "</td><td>" + ConsoleHTML.escape(change.recordedAt)
                html += "</td><td>" + ConsoleHTML.escape(change.userId ?? "") + "</td><td>" + ConsoleHTML.escape(change.reason) + "</td></tr>"
            }
            html += "</tbody></table>\n"
        }
        return html
    }
}
