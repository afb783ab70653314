import Hummingbird
import Ledger
import LedgerQueries

/// Cohorts by the month of their first paid period: how many still pay each month since,
/// shaded by the share retained, and what they brought; each cohort links to its subscriptions.
struct CohortsPage: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/cohorts") { request, context in await routes.guarded(.cohorts, request, context) { session in
            try await page(request, session)
        } }
        router.get("console/cohorts.csv") { request, context in await routes.guarded(.cohorts, request, context) { _ in
            let form = try HistoryForm(request, console: console, interval: .month)
            let report = try await console.reads.cohortsReport(form.query)
            return form.download(HistoryCSV.cohorts(report, months: form.query.months), "cohorts")
        } }
    }

    private func page(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let form = try HistoryForm(request, console: console, interval: .month)
        let report = try await console.reads.cohortsReport(form.query)
        let months = form.query.months
        let width = report.cohorts.map(\.retained.count).max() ?? 0
        let rows = report.cohorts.map { cohort -> [String: Any] in
            let cells = cohort.retained.enumerated().map { offset, retained -> [String: Any] in
                // Shaded in tenths of the cohort retained: a class per tenth, styled by the sheet.
                let tenth = cohort.customers == 0 ? 0 : (retained * 10 + cohort.customers / 2) / cohort.customers
                return [
                    "retained": String(retained), "shade": "shade-\(min(10, max(0, tenth)))",
                    "revenue": Money(minorUnits: cohort.revenueMinor[offset], currency: cohort.currency).decimal,
                ]
            }
            return [
                "cohort": cohort.cohort, "currency": cohort.currency, "customers": String(cohort.customers), "cells": cells,
                "href": form.link("cohorts", [("cohort", cohort.cohort), ("currency", cohort.currency)]),
            ]
        }
        var values = form.values(console: console)
        values["rows"] = rows
        values["monthsSince"] = (0..<width).map { ["label": "+\($0)"] as [String: Any] }
        values["firstMonth"] = months.first?.label ?? ""
        values["csvHref"] = "/console/cohorts.csv" + ConsoleLinks.query(form.pairs())
        if let cohort = form.figure {
            let chosen = report.cohorts.indices.filter { report.cohorts[$0].cohort == cohort && (form.period == nil || report.cohorts[$0].currency == form.period) }
            guard !chosen.isEmpty else { throw ConsoleError.badRequest("No cohort \(cohort) in this report.") }
            let ids = Array(Set(chosen.flatMap { report.members[$0] })).sorted()
            values["drill"] = ["figure": "customers", "period": cohort, "count": ids.count, "items": HistoryForm.list(ids)] as [String: Any]
        }
        return console.renderer.page("cohorts", title: "Cohorts", area: .cohorts, session: session, values: values)
    }
}
