import Foundation
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore

/// `GET /v1/reports/subscriptions`, `/cohorts` and `/refunds` (finance): the reports of finance
/// over time (docs/finance-over-time.md), as JSON or `format=csv`. A figure's drill-down is the
/// same call with `figure` and `period` (a cohort's: `cohort` and `currency`), answering the
/// original transaction ids it counts.
extension LedgerRoutes {
    private struct Points<Point: Encodable & Sendable>: Encodable, Sendable {
        var points: [Point]
    }

    private struct Cohorts: Encodable, Sendable {
        var cohorts: [CohortMetrics.Cohort]
    }

    /// A figure's subscriptions: what finance opens as dispute timelines.
    private struct DrillDown: Encodable, Sendable {
        var report: String
        var period: String
        var figure: String
        var originalTransactionIds: [String]
    }

    private enum Format: String { case json, csv }

    func subscriptionsReport(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let (query, format) = try historyQuery(request, context)
        let parameters = request.uri.queryParameters
        if let figureText = parameters.get("figure") {
            // A drill-down counts nothing else: the figure's subscriptions alone.
            let figure: SubscriptionMetrics.Figure = try drillFigure(figureText)
            let period = try drillPeriod(parameters.get("period"), in: query.periods.map(\.label))
            return try JSONResponse.make(DrillDown(
                report: "subscriptions", period: period, figure: figure.rawValue,
                originalTransactionIds: try await reads(for: request).subscriptionsFigure(figure, in: period, query) ?? []))
        }
        let report = try await reads(for: request).subscriptionsReport(query).report
        switch format {
        case .csv: return Self.csv(HistoryCSV.subscriptions(report), name: "subscriptions", query)
        case .json: return try JSONResponse.make(Points(points: report.points))
        }
    }

    func cohortsReport(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let parameters = request.uri.queryParameters
        if let by = parameters.get("by"), by != "month" {
            throw APIError.invalidRequest("by is month, not \(by)")
        }
        let (query, format) = try historyQuery(request, context, interval: .month)
        let report = try await reads(for: request).cohortsReport(query)
        if let cohort = parameters.get("cohort") {
            let currency = parameters.get("currency")
            guard let index = report.cohorts.firstIndex(where: { $0.cohort == cohort && (currency == nil || $0.currency == currency) }) else {
                throw APIError.invalidRequest("no cohort \(cohort)\(currency.map { " in \($0)" } ?? "") in this report")
            }
            let ids = report.cohorts.indices.filter { report.cohorts[$0].cohort == cohort && (currency == nil || report.cohorts[$0].currency == currency) }
                .flatMap { report.members[$0] }
            return try JSONResponse.make(DrillDown(
                report: "cohorts", period: report.cohorts[index].cohort, figure: "customers", originalTransactionIds: Array(Set(ids)).sorted()))
        }
        switch format {
        case .csv: return Self.csv(HistoryCSV.cohorts(report, months: query.months), name: "cohorts", query)
        case .json: return try JSONResponse.make(Cohorts(cohorts: report.cohorts))
        }
    }

    func refundsReport(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let (query, format) = try historyQuery(request, context)
        let report = try await reads(for: request).refundsReport(query)
        let parameters = request.uri.queryParameters
        if let figureText = parameters.get("figure") {
            let figure: RefundMetrics.Figure = try drillFigure(figureText)
            let periods = report.points.map(\.period)
            let period = try drillPeriod(parameters.get("period"), in: periods)
            let index = periods.firstIndex(of: period)!
            return try JSONResponse.make(DrillDown(
                report: "refunds", period: period, figure: figure.rawValue, originalTransactionIds: report.members[index][figure] ?? []))
        }
        switch format {
        case .csv: return Self.csv(HistoryCSV.refunds(report), name: "refunds", query)
        case .json: return try JSONResponse.make(Points(points: report.points))
        }
    }

    /// The query every report reads: `from`, `to`, `interval`, `environment`, `bundle_id`,
    /// `product_id` and `format`, each refused in words when wrong.
    private func historyQuery(
        _ request: Request, _ context: LedgerRequestContext, interval fixed: ReportPeriod.Interval? = nil
    ) throws -> (HistoryQuery, Format) {
        let context = try authenticator.require([.finance], request, context, perApp: true)
        let parameters = request.uri.queryParameters
        func value(_ name: String) -> String? { parameters.get(name) }
        guard let from = value("from"), let to = value("to") else {
            throw APIError.invalidRequest("from and to (YYYY-MM-DD) are required")
        }
        let intervalText = value("interval") ?? ReportPeriod.Interval.month.rawValue
        guard let interval = fixed ?? ReportPeriod.Interval(rawValue: intervalText) else {
            throw APIError.invalidRequest("interval is \(ReportPeriod.Interval.listed), not \(intervalText)")
        }
        let formatText = value("format") ?? Format.json.rawValue
        guard let format = Format(rawValue: formatText) else { throw APIError.invalidRequest("format is json or csv, not \(formatText)") }
        let app = try servedApp(named: try self.app(for: context, named: value("bundle_id")))
        do {
            return (try HistoryQuery(
                from: from, to: to, interval: interval, environment: value("environment") ?? "Production", bundleId: app,
                productId: value("product_id"), commission: service.configuration.commission), format)
        } catch {
            throw APIError.invalidRequest(error.message)
        }
    }

    private func drillFigure<Figure: RawRepresentable & CaseIterable>(_ text: String) throws -> Figure where Figure.RawValue == String {
        guard let figure = Figure(rawValue: text) else {
            throw APIError.invalidRequest("figure is one of \(Figure.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
        }
        return figure
    }

    private func drillPeriod(_ period: String?, in periods: [String]) throws -> String {
        guard let period else { throw APIError.invalidRequest("figure needs period (a period of this report)") }
        guard periods.contains(period) else {
            throw APIError.invalidRequest("period \(period) is not one of this report's (\(periods.first ?? "") … \(periods.last ?? ""))")
        }
        return period
    }

    private static func csv(_ text: String, name: String, _ query: HistoryQuery) -> Response {
        let file = query.fileName(name)
        return Response(
            status: .ok,
            headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(file)\""],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
