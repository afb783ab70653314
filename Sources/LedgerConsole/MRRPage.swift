import Hummingbird
import Ledger
import LedgerQueries

/// MRR and its movement, subscriptions by state, trials and conversion, over time: the report
/// of `GET /v1/reports/subscriptions` as charts and a table, each figure's definition beside
/// it, every point and number linking to the subscriptions it counts.
struct MRRPage: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/mrr") { request, context in await routes.guarded(.mrr, request, context) { session in
            try await page(request, session)
        } }
        router.get("console/mrr.csv") { request, context in await routes.guarded(.mrr, request, context) { _ in
            let form = try HistoryForm(request, console: console)
            let report = try await console.reads.subscriptionsReport(form.query).report
            return form.download(HistoryCSV.subscriptions(report), "subscriptions")
        } }
    }

    /// What each figure counts, shown beside it (docs/finance-over-time.md says the same).
    static let definitions: [(SubscriptionMetrics.Figure, String, String)] = [
        (.active, "Active", "Subscriptions giving access at the period's last instant: a trial or a grace period counts, billing retry does not."),
        (.inTrial, "In trial", "Active in a free trial at the period's end."),
        (.inGracePeriod, "In grace period", "Billing failed and Apple keeps access open, at the period's end."),
        (.inBillingRetry, "In billing retry", "Billing failed, access ended, Apple still trying to charge, at the period's end."),
        (.new, "New", "The first paid period began in the period; a converted trial counts at its conversion."),
        (.churned, "Churned", "Paid access ended in the period and had not resumed by its end (an unconverted trial is not churn; a billing retry still open is)."),
        (.reactivated, "Reactivated", "Access resumed in the period after a churn: none at its start, paid before."),
        (.trialsStarted, "Trials started", "A free trial began in the period."),
        (.trialsConverted, "Trials converted", "A trial's first paid period began in the period, with no expiry between."),
    ]

    private func page(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let form = try HistoryForm(request, console: console)
        let drill = try form.figure.map { text -> (figure: SubscriptionMetrics.Figure, period: String) in
            guard let figure = SubscriptionMetrics.Figure(rawValue: text), let period = form.period else {
                throw ConsoleError.badRequest("No figure \(text) in this report.")
            }
            return (figure, period)
        }
        let (report, listed) = try await console.reads.subscriptionsReport(form.query, listing: drill)
        func href(_ figure: SubscriptionMetrics.Figure, _ period: String) -> String {
            form.link("mrr", [("figure", figure.rawValue), ("period", period)])
        }
        let currencies = Array(Set(report.points.flatMap { $0.mrr.map(\.currency) + $0.movement.map(\.currency) })).sorted()
        var charts: [String] = []
        for currency in currencies.prefix(4) {
            func money(_ minor: Int64) -> String { Money(minorUnits: minor, currency: currency).decimal + " " + currency }
            let line = report.points.map { point in
                let value = point.mrr.first { $0.currency == currency }?.mrrMinor ?? 0
                return HistoryCharts.Point(label: point.period, value: value, text: "MRR " + money(value), href: href(.mrr, point.period))
            }
            charts.append(HistoryCharts.line(line, title: "MRR, \(currency), by \(form.query.interval.rawValue)", cssClass: "mrr", maxLabel: money))
            let stacks = report.points.map { point in
                let m = point.movement.first { $0.currency == currency } ?? SubscriptionMetrics.Movement(currency: currency)
                func part(_ css: String, _ figure: SubscriptionMetrics.Figure, _ name: String, _ minor: Int64) -> (cssClass: String, point: HistoryCharts.Point) {
                    (css, HistoryCharts.Point(label: point.period, value: minor, text: "\(name) " + money(minor), href: href(figure, point.period)))
                }
                return HistoryCharts.Stack(
                    label: point.period,
                    up: [part("new", .movementNew, "new", m.newMinor), part("expansion", .movementExpansion, "expansion", m.expansionMinor),
                         part("reactivation", .movementReactivation, "reactivation", m.reactivationMinor)],
                    down: [part("contraction", .movementContraction, "contraction", m.contractionMinor), part("churn", .movementChurn, "churn", m.churnMinor)])
            }
            charts.append(HistoryCharts.stacked(
                stacks, title: "MRR movement, \(currency): new, expansion, reactivation (up); contraction, churn (down)", maxLabel: money))
        }
        if currencies.isEmpty {
            // No paid subscription yet: the line still runs, at zero, each point still a link.
            let zero = report.points.map { HistoryCharts.Point(label: $0.period, value: 0, text: "MRR 0", href: href(.mrr, $0.period)) }
            charts.append(HistoryCharts.line(zero, title: "MRR: no paid subscription in these periods", cssClass: "mrr", maxLabel: { _ in "0" }))
        }
        let trials = report.points.map { point in
            HistoryCharts.Stack(
                label: point.period,
                up: [("trials", HistoryCharts.Point(label: point.period, value: Int64(point.trialsStarted), text: "\(point.trialsStarted) trials started", href: href(.trialsStarted, point.period)))],
                down: [("converted", HistoryCharts.Point(label: point.period, value: Int64(point.trialsConverted), text: "\(point.trialsConverted) trials converted", href: href(.trialsConverted, point.period)))])
        }
        charts.append(HistoryCharts.stacked(trials, title: "Trials started (up) and converted (down)", maxLabel: { "\($0)" }))

        let columns = Self.definitions.map(\.0)
        let rows = report.points.map { point -> [String: Any] in
            let counts = [point.active, point.inTrial, point.inGracePeriod, point.inBillingRetry, point.new, point.churned, point.reactivated,
                          point.trialsStarted, point.trialsConverted]
            return [
                "period": point.period,
                "cells": zip(columns, counts).map { ["value": String($0.1), "href": href($0.0, point.period)] as [String: Any] },
                "mrr": point.mrr.map { Money(minorUnits: $0.mrrMinor, currency: $0.currency).decimal + " " + $0.currency }.joined(separator: ", "),
                "mrrHref": href(.mrr, point.period),
            ]
        }
        var values = form.values(console: console)
        values["charts"] = charts
        values["definitions"] = Self.definitions.map { ["id": $0.0.rawValue, "label": $0.1, "text": $0.2] as [String: Any] }
        values["columns"] = Self.definitions.map { ["label": $0.1] as [String: Any] }
        values["rows"] = rows
        values["csvHref"] = "/console/mrr.csv" + ConsoleLinks.query(form.pairs())
        if let drill {
            guard let ids = listed else { throw ConsoleError.badRequest("No period \(drill.period) in this report.") }
            values["drill"] = ["figure": drill.figure.rawValue, "period": drill.period, "count": ids.count, "items": HistoryForm.list(ids)] as [String: Any]
        }
        return console.renderer.page("mrr", title: "MRR and movement", area: .mrr, session: session, values: values)
    }
}
