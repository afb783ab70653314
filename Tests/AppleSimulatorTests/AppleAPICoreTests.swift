import AppStore
import AppStoreClient
import AppleSimulator
import Foundation
import Testing

/// The core both of Apple's API clients share (`AppleAPICore`), asked over real HTTP: the
/// simulator answers 429 with `Retry-After` on demand, as Apple's rate limiter does.
@Suite("the Apple API core honours Retry-After")
struct AppleAPICoreTests {
    static func client(_ key: ServerAPIKey, _ running: RunningAppleSimulator) async throws -> ServerAPIClient {
        let configuration = ServerAPIConfiguration(
            issuerId: ServerAPIKey.issuerId, keyId: ServerAPIKey.keyId, privateKeyPEM: key.privateKey.pemRepresentation,
            bundleId: ServerAPIKey.bundleId, baseURL: running.serverAPIURL, maximumAttempts: 4, longestRetryAfter: .seconds(5))
        return try await ServerAPIClient(configuration: configuration, clock: .system)
    }

    @Test("429s with Retry-After: 1 are each waited through, then Apple's answer comes back with every attempt")
    func waitsAsAsked() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "ra", productId: "com.example.removeads")
            let client = try await Self.client(key, running)
            running.simulator.failNextServerAPICalls(2, with: .rateLimited(retryAfterSeconds: 1), endpoint: .transactionInfo)
            let started = ContinuousClock.now
            let answer = try await client.transactionInfo(purchase.transactionId, environment: .sandbox)
            #expect(ContinuousClock.now - started >= .seconds(2), "each Retry-After of one second was waited")
            #expect(answer.attempts.map(\.httpStatus) == [429, 429, 200])
            #expect(running.simulator.serverAPICalls(to: .transactionInfo) == 3)
        }
    }

    @Test("a Retry-After longer than the policy sleeps through fails the call at once as rate limited, Apple's error kept")
    func longerThanThePolicy() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "rb", productId: "com.example.removeads")
            let client = try await Self.client(key, running)
            running.simulator.failNextServerAPICalls(1, with: .rateLimited(retryAfterSeconds: 7), endpoint: .transactionInfo)
            let error = await #expect(throws: ServerAPIError.self) {
                _ = try await client.transactionInfo(purchase.transactionId, environment: .sandbox)
            }
            // Not slept through and asked again: Apple was asked once. (No upper bound on the
            // time: one call took 5.1 s on a loaded CI run.)
            #expect(running.simulator.serverAPICalls(to: .transactionInfo) == 1)
            #expect(error?.kind == .rateLimited)
            #expect(error?.httpStatus == 429)
            #expect(error?.retryAfterSeconds == 7)
            #expect(error?.errorCode == 4_290_000)
            #expect(error?.attempts.count == 1)
        }
    }
}
