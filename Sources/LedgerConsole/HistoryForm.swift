import Hummingbird
import Ledger
import LedgerQueries

/// The form the finance-over-time pages share (from, to, interval, environment, app, product)
/// read into the query the API's reports take, and the same values back as links and choices.
struct HistoryForm {
    var query: HistoryQuery
    /// The drill-down asked for: a figure and a period (a cohort and its currency).
    var figure: String?
    var period: String?

    /// Defaults: the last twelve months, by month, production.
    init(_ request: Request, console: Console, interval fixed: ReportPeriod.Interval? = nil) throws {
        let parameters = request.uri.queryParameters
        func value(_ name: String) -> String? { parameters.get(name).flatMap { $0.isEmpty ? nil : $0 } }
        let today = RevenueDay.of(console.clock())
        let yearAgo = RevenueDay.of(console.clock() - 334 * 86_400_000).prefix(8) + "01"
        let intervalText = value("interval") ?? "month"
        guard let interval = fixed ?? ReportPeriod.Interval(rawValue: intervalText) else {
            throw ConsoleError.badRequest("Interval is \(ReportPeriod.Interval.listed), not \(intervalText).")
        }
        // A bad date or range is the service's invalid request, shown as the revenue form's are.
        query = try HistoryQuery(
            from: value("from") ?? String(yearAgo), to: value("to") ?? today, interval: interval,
            environment: value("environment") ?? "Production", bundleId: try console.appFilter(value("bundle_id")),
            productId: value("product_id"), commission: console.commission)
        figure = value("figure") ?? value("cohort")
        period = value("period") ?? value("currency")
    }

    /// The form's values as query pairs, plus `extra`.
    func pairs(_ extra: [(String, String)] = []) -> [(String, String)] {
        [
            ("from", query.from), ("to", query.to), ("interval", query.interval.rawValue), ("environment", query.environment),
            ("bundle_id", query.bundleId ?? ""), ("product_id", query.productId ?? ""),
        ] + extra
    }

    /// This page with the form's values and `extra` (a drill-down), at its list.
    func link(_ page: String, _ extra: [(String, String)]) -> String {
        "/console/\(page)" + ConsoleLinks.query(pairs(extra)) + "#list"
    }

    /// The values every finance-over-time template reads for its form.
    func values(console: Console) -> [String: Any] {
        [
            "from": query.from, "to": query.to, "productId": query.productId ?? "",
            "intervals": ReportPeriod.Interval.allCases.map { ["value": $0.rawValue, "selected": $0 == query.interval] as [String: Any] },
            "environments": ["Production", "Sandbox"].map { ["value": $0, "selected": $0 == query.environment] as [String: Any] },
            "apps": console.appChoices(selected: query.bundleId),
            "sandbox": query.environment == "Sandbox",
        ]
    }

    /// A report's CSV as a download named as the API names it (`HistoryQuery.fileName`).
    func download(_ csv: String, _ report: String) -> Response {
        ConsoleRenderer.download(Array(csv.utf8), contentType: "text/csv; charset=utf-8", fileName: query.fileName(report))
    }

    /// The drill-down's list: each original transaction id linking to its timeline.
    static func list(_ ids: [String]) -> [[String: Any]] {
        ids.map { ["id": $0, "href": ConsoleLinks.lookup($0, as: "transaction")] }
    }
}
