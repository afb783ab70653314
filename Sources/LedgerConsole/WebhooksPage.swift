import Foundation
import Hummingbird
import Ledger
import LedgerWebhooks

/// Where each webhook endpoint stands (docs/webhooks.md: a failing endpoint shows its backlog
/// and last error): the figures of `purchase-ledger webhooks status` and of `/metrics`, read from
/// the same `WebhookStatus` when the page is opened. Finance's, as the money it tells of is.
struct WebhooksPage: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/webhooks") { request, context in await routes.guarded(.webhooks, request, context) { session in
            let statuses = try await console.pool.withConnection { try WebhookStatus.endpoints(on: $0) }
            return console.renderer.page("webhooks", title: "Webhooks", area: .webhooks, session: session, values: [
                "endpoints": statuses.map(Self.row),
            ])
        } }
    }

    /// One endpoint as the table shows it; times ISO 8601 UTC, as the other pages.
    static func row(_ status: WebhookEndpointStatus) -> [String: Any] {
        [
            "name": status.name, "url": status.url,
            "backlog": String(status.backlog), "outstanding": String(status.outstanding),
            "delivered": String(status.delivered), "failedAttempts": String(status.failedAttempts),
            "behind": status.backlog > 0,
            "oldestWaitingAt": status.oldestWaitingAtMs.map(RevenueDay.iso8601) ?? "–",
            "lastDeliveredAt": status.lastDeliveredAtMs.map(RevenueDay.iso8601) ?? "–",
            "failed": status.lastError != nil,
            "lastError": status.lastError ?? "",
            "lastErrorAt": status.lastErrorAtMs.map(RevenueDay.iso8601) ?? "",
            "leaseOwner": status.leaseOwner ?? "none",
        ]
    }
}
