import Primitives
import TestSupport
import AppStoreClient
import AppleSimulator
import AsyncHTTPClient
import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a simulator on a free loopback port for one test and stops it afterwards.
enum SimulatorHarness {
    /// 2025-01-01T00:00:00Z: a fixed simulated start, so dates in assertions are constants.
    static let startMs: Int64 = 1_735_689_600_000
    static let dayMs: Int64 = 86_400_000

    static func configuration(
        sharedSecret: String? = nil, seed: UInt64 = 7, notificationVersions: Set<NotificationVersion> = [.v1, .v2]
    ) -> AppleSimulator.Configuration {
        var configuration = AppleSimulator.Configuration(machineClock: .system)
        configuration.start = Date(timeIntervalSince1970: Double(startMs) / 1000)
        configuration.sharedSecret = sharedSecret
        configuration.seed = seed
        configuration.notificationVersions = notificationVersions
        // A post to the simulator's own sink must not time out under a full CI run's load: at
        // Apple's 5 s one did (deadlineExceeded, 2026-11-27). A test of the time-out sets its own.
        configuration.notificationTimeout = .seconds(30)
        return configuration
    }

    /// The real verifyReceipt client pointed at `running`, over real HTTP, with short pauses so
    /// tests stay fast (21002 is asked again after 10 ms). The time-out is long: in a full
    /// parallel run a loaded machine took 2.2 s to answer; tests of time-outs pass a short one.
    static func client(
        _ running: RunningAppleSimulator, secret: String? = nil, timeout: Duration = .seconds(20),
        malformedReceiptRetries: Int = 1
    ) -> VerifyReceiptClient {
        VerifyReceiptClient(
            configuration: VerifyReceiptConfiguration(
                productionURL: running.productionURL, sandboxURL: running.sandboxURL, sharedSecret: secret,
                timeout: timeout, malformedReceiptRetries: malformedReceiptRetries,
                malformedReceiptRetryDelay: .milliseconds(10)),
            clock: .system)
    }

    /// A simulator on port 0 (the kernel hands each server a port of its own), or on `port`.
    /// Tests that refuse connections pass a port below the ephemeral range: while refusing, the
    /// port is free for a moment, and a port-0 server of another test could be handed it.
    static func withServer<T>(
        _ configuration: AppleSimulator.Configuration = configuration(), port: Int = 0,
        _ body: (RunningAppleSimulator) async throws -> T
    ) async throws -> T {
        let simulator = try AppleSimulator(configuration: configuration)
        let running = try await AppleSimulatorServer(simulator: simulator).start(host: "127.0.0.1", port: port)
        do {
            let result = try await body(running)
            try await running.stop()
            return result
        } catch {
            try? await running.stop()
            throw error
        }
    }
}

/// Raw HTTP against the simulator, for what does not go through the AppStore client. Calls get
/// 30 s: in a full CI run the simulator's suites start together on two cores, and a refreshed
/// receipt's call passed 10 s (deadlineExceeded, 2026-11-27).
enum RawHTTP {
    static let timeout: TimeAmount = .seconds(30)

    struct Reply {
        var status: Int
        var body: Data
        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }
    }

    static func post(_ url: String, json: Any, timeout: TimeAmount = RawHTTP.timeout) async throws -> Reply {
        try await post(url, body: JSONSerialization.data(withJSONObject: json), timeout: timeout)
    }

    static func post(_ url: String, body: Data, timeout: TimeAmount = RawHTTP.timeout) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: Array(body)))
        return try await execute(request, timeout: timeout)
    }

    static func get(_ url: String) async throws -> Reply {
        try await execute(HTTPClientRequest(url: url), timeout: RawHTTP.timeout)
    }

    private static func execute(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> Reply {
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), body: Data(buffer.readableBytesView))
    }

    /// The `status` verifyReceipt answers on `url`; nil when the body has none.
    static func verifyStatus(_ url: String, receipt: String, password: String? = nil) async throws -> Int? {
        try await verify(url, receipt: receipt, password: password).json?["status"] as? Int
    }

    /// verifyReceipt on `url` with Apple's request body.
    static func verify(_ url: String, receipt: String, password: String? = nil, excludeOld: Bool = false) async throws -> Reply {
        var body: [String: Any] = ["receipt-data": receipt, "exclude-old-transactions": excludeOld]
        if let password { body["password"] = password }
        return try await post(url, json: body)
    }
}

/// The scenario issue 3 names: a monthly subscription with a 7-day trial, renewed twice (days 7
/// and 38: Jan 8 and Feb 8, 2025, one calendar month apart), upgraded to yearly on day 40, that
/// upgrade refunded on day 42.
enum Scenario {
    struct RenewedUpgradedRefunded {
        var first: PurchaseResult
        var upgrade: PurchaseResult
        /// Every transaction as simulated: trial, two renewals, the upgrade.
        var transactions: [SimulatedTransaction]
    }

    static func renewedTwiceUpgradedRefunded(_ simulator: AppleSimulator, appleId: String) async throws -> RenewedUpgradedRefunded {
        let first = try await simulator.purchase(appleId: appleId, productId: "com.example.pro.monthly")
        try await simulator.advance(days: 40)
        guard let upgrade = try await simulator.changeProduct(
            originalTransactionId: first.transactionId, to: "com.example.pro.yearly")
        else { throw ScenarioError.noUpgrade }
        try await simulator.advance(days: 2)
        try await simulator.refund(transactionId: upgrade.transactionId, reason: 1)
        return RenewedUpgradedRefunded(first: first, upgrade: upgrade, transactions: simulator.transactions(of: appleId))
    }

    enum ScenarioError: Error {
        case noUpgrade
    }
}

/// The decoded payload of a compact JWS (no verification: that is the AppStore verifier's job).
func jwsPayload(_ jws: String) throws -> [String: Any] {
    let parts = jws.split(separator: ".")
    guard parts.count == 3 else { throw JWSTestError.notCompact }
    guard let data = Base64URL.decode(parts[1]),
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { throw JWSTestError.notJSON }
    return object
}

enum JWSTestError: Error {
    case notCompact
    case notJSON
}

/// A JSON integer as Int64, however Foundation chose to box it.
func int64(_ value: Any?) -> Int64? {
    switch value {
    case let v as Int: Int64(v)
    case let v as Int64: v
    case let v as NSNumber: v.int64Value
    default: nil
    }
}
