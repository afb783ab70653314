import Hummingbird
import Ledger
import LedgerQueries

/// Sales, refunds and the refund rate over time: the report of `GET /v1/reports/refunds` as a
/// chart of the rate and a table; each point links to the refunded subscriptions.
struct RefundsPage: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/refunds") { request, context in await routes.guarded(.refunds, request, context) { session in
            try await page(request, session)
        } }
        router.get("console/refunds.csv") { request, context in await routes.guarded(.refunds, request, context) { _ in
            let form = try HistoryForm(request, console: console)
            let report = try await console.reads.refundsReport(form.query)
            return form.download(HistoryCSV.refunds(report), "refunds")
        } }
    }

    private func page(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let form = try HistoryForm(request, console: console)
        let report = try await console.reads.refundsReport(form.query)
        func href(_ figure: RefundMetrics.Figure, _ period: String) -> String {
            form.link("refunds", [("figure", figure.rawValue), ("period", period)])
        }
        // The rate in basis points of a percent (ten-thousandths), an integer for the chart's heights.
        let line = report.points.map { point in
            let tenThousandths = RefundMetrics.tenThousandths(refunds: point.refunds, sales: point.sales)
            return HistoryCharts.Point(
                label: point.period, value: tenThousandths, text: "refund rate \(point.refundRate) (\(point.refunds) of \(point.sales))",
                href: href(.refunds, point.period))
        }
        var values = form.values(console: console)
        values["charts"] = [HistoryCharts.line(line, title: "Refund rate (refunds ÷ sales, by count) by \(form.query.interval.rawValue)", cssClass: "rate") {
            "\($0 / 100).\($0 % 100 < 10 ? "0" : "")\($0 % 100)%"
        }]
        values["rows"] = report.points.map { point -> [String: Any] in
            [
                "period": point.period, "sales": String(point.sales), "salesHref": href(.sales, point.period),
                "refunds": String(point.refunds), "refundsHref": href(.refunds, point.period), "rate": "\(point.refundRate)",
                "refunded": point.refunded.map { Money(minorUnits: $0.amountMinor, currency: $0.currency).decimal + " " + $0.currency }.joined(separator: ", "),
            ]
        }
        values["csvHref"] = "/console/refunds.csv" + ConsoleLinks.query(form.pairs())
        if let figureText = form.figure, let period = form.period {
            guard let figure = RefundMetrics.Figure(rawValue: figureText), let index = report.points.firstIndex(where: { $0.period == period }) else {
                throw ConsoleError.badRequest("No figure \(figureText) in period \(period) in this report.")
            }
            let ids = report.members[index][figure] ?? []
            values["drill"] = ["figure": figureText, "period": period, "count": ids.count, "items": HistoryForm.list(ids)] as [String: Any]
        }
        return console.renderer.page("refunds", title: "Refunds", area: .refunds, session: session, values: values)
    }
}
