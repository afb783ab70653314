@testable import LedgerConsole
import Synchronization
import Testing

/// The sign-in limits on a clock the test moves: a sliding window per client address and per
/// token prefix, with the wait `Retry-After` gives.
@Suite struct SignInThrottleTests {
    @Test("after the limit of failures in the window the key waits until the oldest leaves it")
    func slidingWindow() {
        var limiter = AttemptLimiter(limit: 3, windowMs: 60_000, maximumKeys: 100)
        #expect(limiter.wait(for: "a", at: 0) == nil)
        limiter.recordFailure(of: "a", at: 1_000)
        limiter.recordFailure(of: "a", at: 2_000)
        #expect(limiter.wait(for: "a", at: 2_500) == nil)
        limiter.recordFailure(of: "a", at: 3_000)
        // Three in the window: the first (at 1 s) leaves it at 61 s.
        #expect(limiter.wait(for: "a", at: 3_000) == 58_000)
        #expect(limiter.wait(for: "a", at: 60_000) == 1_000)
        #expect(limiter.wait(for: "a", at: 61_000) == nil)
        // Another key is not held.
        #expect(limiter.wait(for: "b", at: 3_000) == nil)
        // A failure after the first left brings the wait to the second's departure.
        limiter.recordFailure(of: "a", at: 61_500)
        #expect(limiter.wait(for: "a", at: 61_500) == Int64(2_000 + 60_000 - 61_500))
    }

    @Test("keys past the maximum are forgotten, those with nothing in the window first")
    func boundedMemory() {
        var limiter = AttemptLimiter(limit: 2, windowMs: 10_000, maximumKeys: 3)
        for (index, key) in ["old", "b", "c"].enumerated() { limiter.recordFailure(of: key, at: Int64(index)) }
        limiter.recordFailure(of: "b", at: 20_000)
        limiter.recordFailure(of: "d", at: 20_001)
        #expect(limiter.failures.count <= 3)
        #expect(limiter.failures["old"] == nil)
        #expect(limiter.failures["b"] != nil && limiter.failures["d"] != nil)
    }

    @Test("per address and per token prefix, on the injected clock, in whole seconds")
    func throttleOnAFixedClock() {
        let clock = TestClock(1_800_000_000_000)
        let throttle = SignInThrottle(
            limits: SignInLimits(perAddress: 3, perTokenPrefix: 5, window: .seconds(600)), clock: { clock.now })
        for attempt in 0..<3 {
            #expect(throttle.check(address: "10.0.0.1", token: "wrong-\(attempt)") == nil)
            throttle.recordFailure(address: "10.0.0.1", token: "wrong-\(attempt)")
            clock.advance(1_000)
        }
        // The first failure was 3 s ago: 597 s to go, whatever the token.
        let refused = throttle.check(address: "10.0.0.1")
        #expect(refused == SignInThrottle.Refusal(limited: "client_address", retryAfterSeconds: 597))
        #expect(throttle.check(address: "10.0.0.1", token: "finance-token") == refused)
        #expect(throttle.check(address: "10.0.0.2", token: "other") == nil)

        // Guesses sharing a prefix from many addresses: held once the prefix has its five.
        for attempt in 0..<2 { throttle.recordFailure(address: "10.1.0.\(attempt)", token: "wrong-spread-\(attempt)") }
        let byPrefix = throttle.check(address: "10.2.0.1", token: "wrong-again")
        #expect(byPrefix?.limited == "token_prefix")
        #expect(throttle.check(address: "10.2.0.1", token: "right-token") == nil)

        // Past the window, all may try again.
        clock.advance(600_000)
        #expect(throttle.check(address: "10.0.0.1", token: "wrong-again") == nil)
    }

    @Test("a token prefix key holds no text of the token")
    func prefixKeyIsADigest() {
        let key = SignInThrottle.prefixKey("finance-token-0123456789")
        #expect(!key.contains("fina"))
        #expect(key == SignInThrottle.prefixKey("finaNOT-THE-SAME"))
        #expect(key != SignInThrottle.prefixKey("supp"))
    }
}

/// A clock for tests: milliseconds since 1970 that move only when told.
final class TestClock: Sendable {
    private let milliseconds: Mutex<Int64>

    init(_ start: Int64) { milliseconds = Mutex(start) }

    var now: Int64 { milliseconds.withLock { $0 } }

    func advance(_ by: Int64) { milliseconds.withLock { $0 += by } }
}
