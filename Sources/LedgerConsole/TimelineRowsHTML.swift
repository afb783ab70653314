import Ledger
import LedgerQueries

/// The look-up's timeline table: one `<tr class="entry">` per entry shown, written here rather
/// than by the template. Mustache finds each `{{x}}` through the context stack with half a dozen
/// dynamic casts, and the ten of them in each of a user's 100 rows were a quarter of the page's
/// CPU (perf, BENCHMARKS.md 2026-11-27 afternoon). Every value goes through `ConsoleHTML.escape`,
/// exactly as `{{x}}` would: this is the only place the look-up writes markup itself, and
/// `ConsoleHostileInputTests` holds it to that.
enum TimelineRowsHTML {
    static func rows(_ entries: some Collection<TimelineView.Entry>) -> String {
        var html = ""
        html.reserveCapacity(entries.count * 1_500)
        for entry in entries { append(entry, to: &html) }
        return html
    }

    private static func append(_ entry: TimelineView.Entry, to html: inout String) {
        html += #"<tr class="entry"><td class="num">"#
        html += String(entry.position)
        html += "</td><td>"
        html += ConsoleHTML.escape(entry.recordedAt)
        html += "</td><td>"
        html += ConsoleHTML.escape(entry.type)
        html += #"<br><span class="muted">"#
        html += ConsoleHTML.escape(entry.stream)
        html += "</span></td>\n"
        html += #"<td class="country">"#
        html += ConsoleHTML.escape(country(of: entry))
        html += "</td><td>"
        html += ConsoleHTML.escape(entry.summary)
        html += "<details><summary>event data</summary><pre>"
        html += ConsoleHTML.escape(EvidenceDocument.pretty(entry.data))
        html += "</pre></details></td>\n<td>"
        for name in EvidenceDocument.documentNames(in: entry.data) {
            html += #"<a class="evidence" href=""#
            html += ConsoleHTML.escape(ConsoleLinks.document(name))
            html += #"" title="sha256 "#
            html += ConsoleHTML.escape(name)
            html += #""><code>"#
            html += ConsoleHTML.escape(String(name.prefix(12)) + "…")
            html += "</code></a><br>"
        }
        html += "</td></tr>\n"
    }

    /// The storefront the event recorded (a delivery, a renewal, Apple's Get Transaction Info),
    /// empty for the others.
    static func country(of entry: TimelineView.Entry) -> String {
        guard case .object(let data) = entry.data else { return "" }
        return Storefront.countryCode(data["storefront"]?.stringValue) ?? ""
    }
}
