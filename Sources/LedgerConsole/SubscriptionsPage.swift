import Foundation
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService

/// Subscriptions at a glance: active, MRR per currency, trials, grace period, billing retry,
/// churned and reactivated per month, and where each commitment stands with the committed value
/// still to come per currency; every figure links to the subscriptions behind it.
struct SubscriptionsPage: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/subscriptions") { request, context in await routes.guarded(.subscriptions, request, context) { session in
            try await page(request, session)
        } }
    }

    private func page(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let parameters = request.uri.queryParameters
        let environment = parameters.get("environment") ?? "Production"
        guard ["Production", "Sandbox"].contains(environment) else { throw ConsoleError.badRequest("Environment is Production or Sandbox.") }
        let app = try console.appFilter(parameters.get("bundle_id"))
        let overview = try await console.reads.subscriptionOverview(environment: environment, bundleId: app)
        func link(_ list: String, _ month: String? = nil) -> String {
            "/console/subscriptions"
                + ConsoleLinks.query([("environment", environment), ("bundle_id", app ?? ""), ("list", list)] + (month.map { [("month", $0)] } ?? []))
                + "#list"
        }
        let churned = overview.churnedByMonth, reactivated = overview.reactivatedByMonth
        let months = Set(churned.keys).union(reactivated.keys).sorted(by: >).prefix(24)
        var values: [String: Any] = [
            "environments": ["Production", "Sandbox"].map { ["value": $0, "selected": $0 == environment] as [String: Any] },
            "apps": console.appChoices(selected: app),
            "figures": [
                ["id": "active", "label": "Active", "value": String(overview.active.count), "href": link("active")],
                ["id": "paying", "label": "Paying (active, not in trial)", "value": String(overview.paying.count), "href": link("paying")],
                ["id": "trials", "label": "In a free trial", "value": String(overview.trials.count), "href": link("trials")],
                ["id": "grace", "label": "In grace period", "value": String(overview.inGracePeriod.count), "href": link("grace")],
                ["id": "retry", "label": "In billing retry", "value": String(overview.inBillingRetry.count), "href": link("retry")],
            ],
            "mrr": overview.mrr.map { ["currency": $0.currency, "value": $0.decimal, "href": link("paying")] },
            "noMRR": overview.mrr.isEmpty,
            "committedTotals": overview.committedStillToCome.map { ["currency": $0.currency, "value": $0.decimal, "href": link("committed")] },
            "commitments": Self.commitments(overview.committed),
            "months": months.map { month in
                ["month": month, "churned": churned[month]?.count ?? 0, "reactivated": reactivated[month]?.count ?? 0,
                 "churnedHref": link("churned", month), "reactivatedHref": link("reactivated", month)] as [String: Any]
            },
        ]
        if let list = parameters.get("list") {
            let month = parameters.get("month") ?? ""
            let items: [SubscriptionOverview.Item]
            let title: String
            switch list {
            case "active": (items, title) = (overview.active, "Active subscriptions")
            case "paying": (items, title) = (overview.paying, "Paying subscriptions (the MRR)")
            case "trials": (items, title) = (overview.trials, "In a free trial")
            case "grace": (items, title) = (overview.inGracePeriod, "In billing grace period")
            case "retry": (items, title) = (overview.inBillingRetry, "In billing retry")
            case "churned": (items, title) = (churned[month] ?? [], "Churned in \(month)")
            case "reactivated": (items, title) = (reactivated[month] ?? [], "Reactivated in \(month)")
            case "committed": (items, title) = (overview.committed, "In a commitment (the committed value still to come)")
            default: throw ConsoleError.badRequest("Unknown list \(list).")
            }
            values["list"] = [
                "title": title, "count": items.count,
                "items": items.prefix(1000).map { item in
                    ["originalTransactionId": item.originalTransactionId, "originalTransactionHref": ConsoleLinks.lookup(item.originalTransactionId),
                     "app": item.bundleId, "productId": item.productId, "userId": item.userId, "userHref": ConsoleLinks.lookup(item.userId),
                     "status": item.status.rawValue, "expiresAt": item.expiresAtMs.map(RevenueDay.iso8601) ?? "",
                     "autoRenew": item.autoRenew.map { $0 ? "on" : "off" } ?? "unknown",
                     "monthly": item.monthly.map(Self.amount) ?? "",
                     "commitment": item.commitment.map(Self.period) ?? ""] as [String: Any]
                },
                "truncated": items.count > 1000,
            ] as [String: Any]
        }
        return console.renderer.page("subscriptions", title: "Subscriptions", area: .subscriptions, session: session, values: values)
    }

    /// The commitments table: per running commitment, instalment k of n, the instalment, the
    /// commitment's price and end, and the instalment × (n − k) still to come; the first 1,000.
    private static func commitments(_ items: [SubscriptionOverview.Item]) -> [String: Any] {
        let rows = items.prefix(1000).compactMap { item -> [String: Any]? in
            guard let commitment = item.commitment else { return nil }
            return [
                "originalTransactionId": item.originalTransactionId, "originalTransactionHref": ConsoleLinks.lookup(item.originalTransactionId),
                "productId": item.productId, "userId": item.userId, "userHref": ConsoleLinks.lookup(item.userId),
                "status": item.status.rawValue, "plan": commitment.rawBillingPlanType ?? "",
                "period": period(commitment), "instalment": commitment.instalment.map(amount) ?? "",
                "commitmentPrice": commitment.commitmentPrice.map(amount) ?? "",
                "endsAt": commitment.expiresAtMs.map(RevenueDay.iso8601) ?? "",
                "stillToCome": commitment.stillToCome.map(amount) ?? "",
            ]
        }
        return ["count": items.count, "rows": rows, "truncated": items.count > 1000, "empty": items.isEmpty]
    }

    /// "3 of 12": the instalment the latest transaction paid, of the commitment's.
    private static func period(_ commitment: SubscriptionSummary.CommitmentStanding) -> String {
        "\(commitment.periodNumber) of \(commitment.totalPeriods)"
    }

    private static func amount(_ money: Money) -> String { "\(money.decimal) \(money.currency)" }
}
