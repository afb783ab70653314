import AppStore
import Foundation
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import Primitives

/// Revenue by day, month, product or country, per currency, one environment at a time: the
/// report of `GET /v1/reports/revenue` and `audit revenue`, shown as a table and a chart of net
/// and refunds over time, and downloadable as that same report's CSV and JSON. It says so when
/// the commission plan estimates the proceeds (no price point priced a sale).
struct RevenuePage: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/revenue") { request, context in await routes.guarded(.revenue, request, context) { session in
            try await page(request, session)
        } }
        router.get("console/revenue.csv") { request, context in await routes.guarded(.revenue, request, context) { _ in
            let report = try await console.reads.revenue(try query(request))
            let q = report.query
            return ConsoleRenderer.download(
                Array(report.csv.utf8), contentType: "text/csv; charset=utf-8",
                fileName: "revenue-\(q.environment)-\(q.from)-\(q.to)-by-\(q.groupBy.rawValue).csv")
        } }
        router.get("console/revenue.json") { request, context in await routes.guarded(.revenue, request, context) { _ in
            let report = try await console.reads.revenue(try query(request))
            let q = report.query
            return ConsoleRenderer.download(
                Array(try LedgerJSON.encoder.encode(report)), contentType: "application/json",
                fileName: "revenue-\(q.environment)-\(q.from)-\(q.to)-by-\(q.groupBy.rawValue).json")
        } }
    }

    /// The form's query, defaulting to the last 30 days of production by day.
    func query(_ request: Request) throws -> RevenueQuery {
        let parameters = request.uri.queryParameters
        let now = console.clock()
        let today = RevenueDay.of(now)
        let from = parameters.get("from").flatMap { $0.isEmpty ? nil : $0 } ?? RevenueDay.of(now - 29 * 86_400_000)
        let to = parameters.get("to").flatMap { $0.isEmpty ? nil : $0 } ?? today
        let groupText = parameters.get("group_by") ?? "day"
        guard let grouping = RevenueQuery.Grouping(rawValue: groupText) else {
            throw ConsoleError.badRequest("Group by \(RevenueQuery.Grouping.listed), not \(groupText).")
        }
        let app = try console.appFilter(parameters.get("bundle_id"))
        return try RevenueQuery(
            from: from, to: to, groupBy: grouping, environment: parameters.get("environment") ?? "Production", commission: console.commission,
            bundleId: app)
    }

    private func page(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let query = try query(request)
        let report = try await console.reads.revenue(query)
        // The chart always runs over time, by day for up to three months, else by month.
        var overTime = query
        overTime.groupBy = ConsoleDates.days(from: query.from, to: query.to) <= 92 ? .day : .month
        let series = overTime.groupBy == query.groupBy ? report : try await console.reads.revenue(overTime)
        let estimated = try await console.reads.estimatedSales(query)
        let parameters = ConsoleLinks.query([
            ("from", query.from), ("to", query.to), ("group_by", query.groupBy.rawValue), ("environment", query.environment),
            ("bundle_id", query.bundleId ?? ""),
        ])
        func row(_ row: RevenueRow, total: Bool) -> [String: Any] {
            ["key": total ? "Total" : row.key, "currency": row.currency, "app": row.bundleId, "cells": row.cells, "total": total]
        }
        let currencies = Array(Set(series.rows.map(\.currency))).sorted()
        let charts = currencies.prefix(4).map { currency in
            RevenueChart(rows: series.rowsAcrossApps.filter { $0.currency == currency }, currency: currency, grouping: overTime.groupBy).svg
        }
        return console.renderer.page("revenue", title: "Revenue", area: .revenue, session: session, values: [
            "from": query.from, "to": query.to, "environment": query.environment,
            "groupings": RevenueQuery.Grouping.allCases.map { ["value": $0.rawValue, "selected": $0 == query.groupBy] as [String: Any] },
            "environments": ["Production", "Sandbox"].map { ["value": $0, "selected": $0 == query.environment] as [String: Any] },
            "apps": console.appChoices(selected: query.bundleId),
            "sandbox": query.environment == "Sandbox",
            "groupBy": query.groupBy.rawValue, "columns": RevenueReport.csvColumns.filter { $0 != "bundle_id" },
            "commission": query.commission.rawValue,
            "rows": report.rows.map { row($0, total: false) } + report.totals.map { row($0, total: true) },
            "empty": report.rows.isEmpty, "charts": charts, "chartGrouping": overTime.groupBy.rawValue,
            "estimated": report.rows.contains(where: \.proceedsEstimated),
            "estimatedCount": estimated.count,
            "estimatedSales": estimated.sales.map { sale in
                ["id": sale.transactionId, "href": ConsoleLinks.lookup(sale.transactionId), "productId": sale.productId, "day": sale.day,
                 "price": Money(minorUnits: sale.grossMinor, currency: sale.currency).decimal, "currency": sale.currency,
                 "country": sale.country, "reason": sale.reason] as [String: Any]
            },
            "csvHref": "/console/revenue.csv" + parameters, "jsonHref": "/console/revenue.json" + parameters,
        ])
    }
}

/// Days of the revenue form, in UTC as the reports write them (`RevenueDay`).
enum ConsoleDates {
    /// Days from `from` to `to` (`YYYY-MM-DD`), both included; 0 when either is not a date.
    static func days(from: String, to: String) -> Int {
        guard let a = UTCDays.days(of: from), let b = UTCDays.days(of: to) else { return 0 }
        return Int(b - a) + 1
    }
}
