import Foundation
import ServiceLifecycle

/// A simulator server started with `AppleSimulatorServer.start`: where it listens, and how to
/// stop it.
public struct RunningAppleSimulator: Sendable {
    public let simulator: AppleSimulator
    public let host: String
    /// The bound port (the real one when started on port 0).
    public let port: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>

    /// "http://HOST:PORT".
    public var baseURL: String { "http://\(host):\(port)" }
    /// For `APPLE_VERIFY_RECEIPT_PRODUCTION_URL`.
    public var productionURL: String { "\(baseURL)/production/verifyReceipt" }
    /// For `APPLE_VERIFY_RECEIPT_SANDBOX_URL`.
    public var sandboxURL: String { "\(baseURL)/sandbox/verifyReceipt" }
    /// Where the simulator records notifications posted to itself (for tests without a ledger).
    public var notificationSinkURL: String { "\(baseURL)/control/notification-sink" }

    /// Shuts the server down gracefully and waits until it has.
    public func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
