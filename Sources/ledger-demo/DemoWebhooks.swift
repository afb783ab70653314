import Foundation
import Ledger
import LedgerWebhooks
import Logging
import PurchaseLedgerCLI
import Postgres

/// The demo's app backend: a receiver of the ledger's webhooks on loopback, verifying every
/// signature. It is down while the crowd buys (the ledger keeps retrying), comes back, and the
/// demo prints what it was told once it has caught up.
struct DemoWebhooks: Sendable {
    static let endpointName = "app-backend"
    let receiver: WebhookReceiver
    let signer: WebhookSigner
    let downSince = DownClock()

    static func start(logger: Logger) async throws -> DemoWebhooks {
        let signer = WebhookSigner(secrets: try WebhookSecrets(WebhookSecrets.generate()))
        var quiet = logger
        quiet.logLevel = .warning
        let receiver = WebhookReceiver(signer: signer, logger: quiet)
        try await receiver.start()
        return DemoWebhooks(receiver: receiver, signer: signer)
    }

    var endpoints: [WebhookEndpoint] { [WebhookEndpoint(name: Self.endpointName, url: receiver.url)] }

    /// The receiver goes down (true) or comes back (false).
    func setDown(_ down: Bool) async throws {
        if down {
            await receiver.goDown()
            downSince.mark()
            print("  (the app's webhook receiver goes down for the crowd's days)")
        } else {
            try await receiver.comeBack()
            print("  (the app's webhook receiver is back after \(downSince.elapsedText); the ledger retries what it refused)")
        }
    }

    /// Waits until the endpoint has acknowledged every message the ledger made, then prints what
    /// the app's backend heard: counts by type, and the story of bob's refunded coins.
    func report(pool: ConnectionPool, refundedTransaction: String) async throws {
        let started = ContinuousClock.now
        var status: WebhookEndpointStatus?
        // Retries back off (up to a minute or so after a short outage): the demo waits them out.
        while ContinuousClock.now - started < .seconds(180) {
            status = try await pool.withConnection { try WebhookStatus.endpoints(on: $0) }.first { $0.name == Self.endpointName }
            if let status, status.backlog == 0, status.position > 0 { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        guard let status, status.backlog == 0 else {
            throw DemoError("the webhook endpoint did not catch up: \(status.map { "backlog \($0.backlog), last error \($0.lastError ?? "none")" } ?? "no status")")
        }
        let told = receiver.acknowledged
        let refused = receiver.arrivals.count - told.count
        print("\nwhat the app's backend was told (webhooks to \(receiver.url), Standard Webhooks signatures):")
        print("  \(told.count) messages, every signature valid: \(told.allSatisfy { $0.signatureValid }); \(status.failedAttempts) attempts failed while it was down, \(refused) requests answered other than 2xx")
        print("  caught up \(Self.seconds(ContinuousClock.now - started)) after the day ended (purchase-ledger webhooks status: backlog \(status.backlog))")
        var counts: [String: Int] = [:]
        for arrival in told { counts[arrival.type, default: 0] += 1 }
        for type in WebhookEventType.allCases.map(\.rawValue) where counts[type] != nil {
            print("  \(type.padding(toLength: 34, withPad: " ", startingAt: 0)) \(counts[type]!)")
        }
        // Bob's refund, as the app heard it: the refund, then his balance taken back.
        let refund = told.first { $0.type == "purchase.refunded" && $0.data["transaction_id"] as? String == refundedTransaction }
        if let refund, let user = refund.data["user_id"] as? String {
            let position = refund.data["position"] as? Int ?? 0
            print("  \(user)'s refund, as told:")
            for arrival in told where arrival.data["user_id"] as? String == user && arrival.data["position"] as? Int == position {
                print("    \(arrival.id) \(arrival.type) \(Self.describe(arrival.data))")
            }
            if let last = told.last(where: { $0.type == "balance.changed" && $0.data["user_id"] as? String == user }) {
                print("    his balance as last told: \(last.data["balance"] ?? "?") \(last.data["unit"] ?? "")")
            }
        }
    }

    static func describe(_ data: [String: Any]) -> String {
        data.keys.sorted().filter { !["position", "user_id", "hash"].contains($0) }.map { "\($0)=\(data[$0] ?? "null")" }.joined(separator: " ")
    }

    static func seconds(_ duration: Duration) -> String {
        let millis = duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
        return "\(millis / 1_000).\(millis % 1_000 / 100) s"
    }

    func stop() async { await receiver.stop() }
}

/// When the receiver went down, for the line that says how long it was.
final class DownClock: @unchecked Sendable {
    private let lock = NSLock()
    private var since: ContinuousClock.Instant?

    func mark() { lock.withLock { since = .now } }

    var elapsedText: String {
        lock.withLock { since.map { DemoWebhooks.seconds(.now - $0) } ?? "0 s" }
    }
}
