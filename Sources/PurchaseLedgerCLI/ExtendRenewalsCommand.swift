import AppStore
import ArgumentParser
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging

/// `purchase-ledger extend-renewals`: Apple's mass extension of a product's active
/// subscriptions, its status polled until Apple says complete (docs/cli.md).
struct ExtendRenewalsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend-renewals",
        abstract: "Extend the renewal date of every active subscriber of a product (Apple's mass extension).",
        discussion: "Prints Apple's request id, then the succeeded and failed counts once Apple says the request is complete. Exit 0 when complete with none failed; 1 when some failed or the time ran out (the request goes on at Apple; its RENEWAL_EXTENDED notifications are recorded as they come). Needs the App Store Server API credentials.")

    @OptionGroup var database: DatabaseOptions
    @Option(name: .customLong("product"), help: "The subscription's product id") var product: String
    @Option(name: .customLong("days"), help: "1 to 90") var days: Int64
    @Option(name: .customLong("reason"), help: "customer_satisfaction, other or service_issue") var reason: String
    @Option(name: .customLong("storefronts"), help: "ISO 3166-1 alpha-3 codes, comma-separated (default: every storefront)") var storefronts: String?
    @Option(name: .customLong("environment"), help: "Production or Sandbox") var environment: String = "Production"
    @Option(name: .customLong("note"), help: "Why, in support's words; recorded with the request") var note: String?
    @Option(name: .customLong("bundle-id"), help: "The app whose product it is (required when the ledger serves several)") var bundleId: String?
    @Option(name: .customLong("poll-seconds"), help: "Seconds between status polls") var pollSeconds: Int = 60
    @Option(name: .customLong("timeout-seconds"), help: "How long to poll before giving up") var timeoutSeconds: Int = 86_400

    func validate() throws {
        guard (1...90).contains(days) else { throw ValidationError("--days is 1 to 90 (Apple's limit)") }
        guard ExtensionReason(rawValue: reason) != nil else {
            throw ValidationError("--reason is \(ExtensionReason.allCases.map(\.rawValue).joined(separator: ", ")), not \(reason)")
        }
        guard AppStoreEnvironment(rawValue: environment) == .production || AppStoreEnvironment(rawValue: environment) == .sandbox else {
            throw ValidationError("--environment is Production or Sandbox, not \(environment)")
        }
        for code in parsedStorefronts ?? [] where code.count != 3 || !code.allSatisfy({ $0.isASCII && $0.isUppercase }) {
            throw ValidationError("--storefronts are ISO 3166-1 alpha-3 codes (USA, DEU), not \(code)")
        }
        guard pollSeconds >= 1, timeoutSeconds >= 1 else { throw ValidationError("--poll-seconds and --timeout-seconds are 1 or more") }
    }

    var parsedStorefronts: [String]? {
        storefronts.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }.filter { !$0.isEmpty } }
    }

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.extend-renewals")
        let (product, days, note, storefronts, bundleId) = (product, days, note, parsedStorefronts, bundleId)
        let reason = ExtensionReason(rawValue: reason)!
        let environment = AppStoreEnvironment(rawValue: environment)!
        let (poll, timeout) = (Duration.seconds(pollSeconds), Duration.seconds(timeoutSeconds))
        let completed = try await database.withAskingApple(logger: logger) { service, _ -> MassRenewalExtensionCompleted? in
            let metadata = RequestMetadata(actor: "cli")
            let asked = try await service.requestMassExtension(
                productId: product, days: days, reason: reason, storefronts: storefronts, environment: environment, note: note,
                bundleId: bundleId, metadata: metadata)
            if asked.resumed { print("following request \(asked.requested.requestId), which an earlier run left unfinished") }
            print("request \(asked.requested.requestId): extend every active subscription of \(product) by \(days) days (\(reason.rawValue))")
            return try await service.followMassExtension(asked, pollEvery: poll, timeout: timeout, metadata: metadata) { status in
                if status.complete != true { print("not complete yet: \(status.succeededCount ?? 0) extended, \(status.failedCount ?? 0) failed so far") }
            }
        }
        guard let completed else {
            print("Apple did not say complete within \(timeoutSeconds) s")
            throw ExitCode(1)
        }
        print("complete: \(completed.succeededCount) succeeded, \(completed.failedCount) failed")
        if completed.failedCount > 0 { throw ExitCode(1) }
    }
}
