import ArgumentParser
import Foundation
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore
import Logging

/// `purchase-ledger report subscriptions|cohorts|refunds`: finance over time, as
/// `GET /v1/reports/…` answers it (docs/finance-over-time.md says what each figure counts).
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Finance over time: subscriptions (MRR and its movement), cohorts, refunds.",
        subcommands: [Subscriptions.self, Cohorts.self, Refunds.self])

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, csv, json
    }

    /// The options every report takes.
    struct Options: ParsableArguments {
        @OptionGroup var database: DatabaseOptions

        @Option(help: "First day, YYYY-MM-DD (UTC)")
        var from: String

        @Option(help: "Last day, YYYY-MM-DD (UTC, inclusive)")
        var to: String

        @Option(name: .customLong("bundle-id"), help: "One app's figures only (default: every app's)")
        var bundleId: String?

        @Option(name: .customLong("product-id"), help: "One product's figures only")
        var productId: String?

        @Option(help: "Production or Sandbox")
        var environment: String = "Production"

        @Option(help: "table, csv or json")
        var format: Format = .table

        func query(interval: String) throws -> HistoryQuery {
            guard let interval = ReportPeriod.Interval(rawValue: interval) else {
                throw ValidationError("--interval is \(ReportPeriod.Interval.listed), not \(interval)")
            }
            do {
                return try HistoryQuery(
                    from: from, to: to, interval: interval, environment: environment, bundleId: bundleId, productId: productId,
                    commission: try LedgerConfiguration.commission(from: ProcessInfo.processInfo.environment))
            } catch {
                throw ValidationError(error.message)
            }
        }

        func read<T: Sendable>(_ label: String, _ body: @escaping @Sendable (ReadModels) async throws -> T) async throws -> T {
            try await database.withReadModels(logger: Logger(label: "purchase-ledger.report.\(label)")) { reads, _ in try await body(reads) }
        }
    }

    struct Subscriptions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "subscriptions",
            abstract: "Active, trials, grace period, billing retry, new, churned, reactivated, trials started and converted, MRR and its movement, per period.",
            discussion: "Each figure as the log stood at the end of its period (UTC), from the dates Apple gave. Money in json is integer minor units; csv and table show major units. --figure and --period list the original transaction ids a figure counts.")

        @OptionGroup var options: Options

        @OptionGroup var drill: Drill

        func validate() throws {
            _ = try options.query(interval: drill.interval)
            try drill.check(SubscriptionMetrics.Figure.allCases.map(\.rawValue))
        }

        func run() async throws {
            let query = try options.query(interval: drill.interval)
            if let figure = drill.figure.flatMap(SubscriptionMetrics.Figure.init(rawValue:)), let period = drill.period {
                let ids = try await options.read("subscriptions") { try await $0.subscriptionsFigure(figure, in: period, query) }
                try Drill.print(ids, period: period, of: query.periods.map(\.label))
                return
            }
            let report = try await options.read("subscriptions") { try await $0.subscriptionsReport(query).report }
            switch options.format {
            case .json: print(String(decoding: try LedgerJSON.encoder.encode(["points": report.points]), as: UTF8.self))
            case .csv: print(HistoryCSV.subscriptions(report), terminator: "")
            case .table:
                print("subscriptions \(query.from) to \(query.to), \(query.environment), by \(query.interval.rawValue)")
                print(ReportTable.render(HistoryCSV.subscriptionColumns, HistoryCSV.subscriptionRows(report), left: [0, 10]), terminator: "")
            }
        }
    }

    struct Cohorts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cohorts",
            abstract: "Customers by the month their first paid period began: how many still pay each month since, and what they brought (gross minus refunds, cumulative).",
            discussion: "A cohort is a month and the currency of its customers' first paid period. --cohort lists the original transaction ids of a cohort's customers.")

        @OptionGroup var options: Options

        @Option(help: "month (the only cut cohorts have)")
        var by: String = "month"

        @Option(help: "List the subscriptions of one cohort (YYYY-MM)")
        var cohort: String?

        func validate() throws {
            guard by == "month" else { throw ValidationError("--by is month, not \(by)") }
            _ = try options.query(interval: "month")
        }

        func run() async throws {
            let query = try options.query(interval: "month")
            let report = try await options.read("cohorts") { try await $0.cohortsReport(query) }
            if let cohort {
                let ids = report.cohorts.indices.filter { report.cohorts[$0].cohort == cohort }.flatMap { report.members[$0] }
                print(ids.sorted().joined(separator: "\n"), terminator: ids.isEmpty ? "" : "\n")
                return
            }
            switch options.format {
            case .json: print(String(decoding: try LedgerJSON.encoder.encode(["cohorts": report.cohorts]), as: UTF8.self))
            case .csv: print(HistoryCSV.cohorts(report, months: query.months), terminator: "")
            case .table:
                print("cohorts \(query.from) to \(query.to), \(query.environment), by month")
                print(ReportTable.render(HistoryCSV.cohortColumns, HistoryCSV.cohortRows(report, months: query.months), left: [0, 1, 3]), terminator: "")
            }
        }
    }

    struct Refunds: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refunds",
            abstract: "Sales, refunds (by the refund's date), refund rate by count and the amounts refunded, per period.",
            discussion: "Sales are paid transactions, consumables included, free trials not. --figure sales|refunds and --period list the original transaction ids.")

        @OptionGroup var options: Options

        @OptionGroup var drill: Drill

        func validate() throws {
            _ = try options.query(interval: drill.interval)
            try drill.check(RefundMetrics.Figure.allCases.map(\.rawValue))
        }

        func run() async throws {
            let query = try options.query(interval: drill.interval)
            let report = try await options.read("refunds") { try await $0.refundsReport(query) }
            if let figure = drill.figure.flatMap(RefundMetrics.Figure.init(rawValue:)), let period = drill.period {
                let periods = report.points.map(\.period)
                try Drill.print(periods.firstIndex(of: period).map { report.members[$0][figure] ?? [] }, period: period, of: periods)
                return
            }
            switch options.format {
            case .json: print(String(decoding: try LedgerJSON.encoder.encode(["points": report.points]), as: UTF8.self))
            case .csv: print(HistoryCSV.refunds(report), terminator: "")
            case .table:
                print("refunds \(query.from) to \(query.to), \(query.environment), by \(query.interval.rawValue)")
                print(ReportTable.render(HistoryCSV.refundColumns, HistoryCSV.refundRows(report), left: [0, 4]), terminator: "")
            }
        }
    }
}

/// `--interval`, and `--figure F --period P`: the original transaction ids behind one figure
/// of one period, one per line, for `purchase-ledger dispute`.
struct Drill: ParsableArguments {
    @Option(help: "day, week or month")
    var interval: String = "month"

    @Option(help: "List the original transaction ids behind one figure (a count, or for subscriptions mrr and movement_new … movement_reactivation)")
    var figure: String?

    @Option(help: "The period of --figure, as the report labels it (YYYY-MM-DD, a week's Monday, or YYYY-MM)")
    var period: String?

    /// Refuses a figure not among `figures`, and one option without the other.
    func check(_ figures: [String]) throws {
        if let figure, !figures.contains(figure) {
            throw ValidationError("--figure is one of \(figures.joined(separator: ", ")), not \(figure)")
        }
        if (figure == nil) != (period == nil) { throw ValidationError("--figure and --period go together") }
    }

    /// Prints `ids`, or refuses a period the report does not hold (`ids` nil).
    static func print(_ ids: [String]?, period: String, of periods: [String]) throws {
        guard let ids else {
            throw ValidationError("--period \(period) is not one of this report's (\(periods.first ?? "") … \(periods.last ?? ""))")
        }
        Swift.print(ids.joined(separator: "\n"), terminator: ids.isEmpty ? "" : "\n")
    }
}

/// Rows under a header, aligned: text columns to the left, figures to the right.
enum ReportTable {
    static func render(_ header: [String], _ rows: [[String]], left: Set<Int>) -> String {
        let widths = header.indices.map { column in ([header] + rows).map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                return left.contains(index) ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}
