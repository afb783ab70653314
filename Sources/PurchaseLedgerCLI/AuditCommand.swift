import ArgumentParser
import Foundation
import Ledger
import LedgerQueries
import LedgerService
import Logging

/// `purchase-ledger audit revenue`: the revenue report of docs/http-api.md for finance.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Reports for finance.", subcommands: [Revenue.self])

    struct Revenue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revenue",
            abstract: "Revenue between two days (UTC, inclusive): gross, refunded, net, tax, Apple's commission (LEDGER_COMMISSION) and proceeds, per currency.",
            discussion: "Refunds count on the day they happened. Sandbox purchases are reported only with --environment Sandbox. csv and table show amounts in major units (0.99); json in integer minor units, as the HTTP API. Proceeds are those of Apple's price points (purchase-ledger price-points refresh) for each sale's storefront and price, as in force when it was made; a sale no point prices is estimated by the commission plan (proceeds_estimated true, tax 0), and the table lists such sales with the reason.")

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case table, csv, json
        }

        @OptionGroup var database: DatabaseOptions

        @Option(help: "First day, YYYY-MM-DD (UTC)")
        var from: String

        @Option(help: "Last day, YYYY-MM-DD (UTC, inclusive)")
        var to: String

        @Option(name: .customLong("group-by"), help: "day, month, product, country (the storefront's ISO 3166-1 alpha-3 code, or unknown), offer (Apple's offerIdentifier, or none) or app (bundle id)")
        var groupBy: String = "day"

        @Option(name: .customLong("bundle-id"), help: "One app's lines only (default: every app's)")
        var bundleId: String?

        @Option(help: "Production or Sandbox")
        var environment: String = "Production"

        @Option(help: "table, csv or json")
        var format: Format = .table

        func validate() throws {
            _ = try query()
        }

        func query() throws -> RevenueQuery {
            guard let grouping = RevenueQuery.Grouping(rawValue: groupBy) else {
                throw ValidationError("--group-by is \(RevenueQuery.Grouping.listed), not \(groupBy)")
            }
            do {
                return try RevenueQuery(
                    from: from, to: to, groupBy: grouping, environment: environment,
                    commission: try LedgerConfiguration.commission(from: ProcessInfo.processInfo.environment), bundleId: bundleId)
            } catch {
                throw ValidationError(error.message)
            }
        }

        func run() async throws {
            let logger = Logger(label: "purchase-ledger.audit")
            let query = try query()
            let (report, estimated) = try await database.withReadModels(logger: logger) { reads, _ in
                (try await reads.revenue(query), try await reads.estimatedSales(query))
            }
            switch format {
            case .json: print(String(decoding: try LedgerJSON.encoder.encode(report), as: UTF8.self))
            case .csv: print(RevenueFormat.csv(report), terminator: "")
            case .table:
                print(RevenueFormat.table(report), terminator: "")
                if estimated.count > 0 {
                    print("\n\(estimated.count) sale(s) estimated by the commission plan (\(query.commission.rawValue)), no price point pricing them:")
                    for sale in estimated.sales {
                        print("  \(sale.day) \(sale.transactionId) \(sale.productId) \(sale.country) \(Money(minorUnits: sale.grossMinor, currency: sale.currency).decimal) \(sale.currency): \(sale.reason)")
                    }
                    if estimated.count > Int64(estimated.sales.count) { print("  ... and \(estimated.count - Int64(estimated.sales.count)) more") }
                }
            }
        }
    }
}
