import Crypto
import Postgres
import Primitives
import Synchronization

/// How many wrong tokens the console's sign-in takes before it answers 429 with `Retry-After`.
/// Counted per server, in memory: a deployment of n servers takes at most n times as many.
public struct SignInLimits: Sendable, Hashable {
    /// Failed sign-ins one client address may make within `window`.
    public var perAddress: Int
    /// Failed sign-ins with tokens that begin with the same 4 characters, from any address,
    /// within `window`: a guesser spread over many addresses is held too.
    public var perTokenPrefix: Int
    public var window: Duration
    /// Keys remembered per kind at most; past it, the key idle longest is forgotten, so an
    /// attacker spraying addresses cannot grow the server's memory without bound.
    public var maximumKeys: Int

    public init(perAddress: Int, perTokenPrefix: Int, window: Duration, maximumKeys: Int = 10_000) {
        self.perAddress = perAddress
        self.perTokenPrefix = perTokenPrefix
        self.window = window
        self.maximumKeys = maximumKeys
    }

    /// 10 wrong tokens per address and 30 per token prefix in 15 minutes.
    public static let standard = SignInLimits(perAddress: 10, perTokenPrefix: 30, window: .seconds(15 * 60))
}

/// Failed attempts per key in a sliding window: after `limit` failures within `windowMs`, the
/// key waits until the oldest of those leaves the window. Pure: the time (milliseconds since
/// 1970, any clock) comes in as an argument, so tests drive it with fixed instants.
struct AttemptLimiter: Sendable, Hashable {
    let limit: Int
    let windowMs: Int64
    let maximumKeys: Int
    /// Per key, the instants of its latest failures inside the window, oldest first; never
    /// more than `limit` of them.
    private(set) var failures: [String: [Int64]] = [:]

    init(limit: Int, windowMs: Int64, maximumKeys: Int) {
        precondition(limit > 0 && windowMs > 0 && maximumKeys > 0, "a limiter needs a limit, a window and room for keys")
        self.limit = limit
        self.windowMs = windowMs
        self.maximumKeys = maximumKeys
    }

    /// Milliseconds until `key` may try again (at least 1), or nil when it may try now.
    func wait(for key: String, at now: Int64) -> Int64? {
        let recent = (failures[key] ?? []).filter { $0 > now - windowMs }
        guard recent.count >= limit else { return nil }
        return max(1, recent[recent.count - limit] + windowMs - now)
    }

    /// Counts a failure of `key` at `now`.
    mutating func recordFailure(of key: String, at now: Int64) {
        var times = (failures[key] ?? []).filter { $0 > now - windowMs }
        times.append(now)
        if times.count > limit { times.removeFirst(times.count - limit) }
        failures[key] = times
        if failures.count > maximumKeys { forgetOldKeys(at: now) }
    }

    /// Drops the keys with nothing left in the window; if that frees no room, the key whose
    /// latest failure is oldest.
    private mutating func forgetOldKeys(at now: Int64) {
        failures = failures.filter { $0.value.contains { $0 > now - windowMs } }
        while failures.count > maximumKeys, let oldest = failures.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
            failures[oldest] = nil
        }
    }
}

/// The console's sign-in limits, shared by the requests of one server: one limiter per client
/// address, one per token prefix, both read and changed under one lock, on the console's clock.
final class SignInThrottle: Sendable {
    /// Why a sign-in is refused for now.
    struct Refusal: Sendable, Hashable {
        /// What reached its limit: `client_address` or `token_prefix` (the log names it).
        var limited: String
        /// Whole seconds until a sign-in may be tried again (`Retry-After`), at least 1.
        var retryAfterSeconds: Int
    }

    private struct State: Sendable {
        var addresses: AttemptLimiter
        var prefixes: AttemptLimiter
    }

    private let state: Mutex<State>
    private let clock: @Sendable () -> Int64

    init(limits: SignInLimits, clock: @escaping @Sendable () -> Int64) {
        let windowMs = Int64(limits.window.components.seconds) * 1_000 + limits.window.components.attoseconds / 1_000_000_000_000_000
        state = Mutex(State(
            addresses: AttemptLimiter(limit: limits.perAddress, windowMs: windowMs, maximumKeys: limits.maximumKeys),
            prefixes: AttemptLimiter(limit: limits.perTokenPrefix, windowMs: windowMs, maximumKeys: limits.maximumKeys)))
        self.clock = clock
    }

    /// Whether `address` may try a sign-in now; asked before the form is read.
    func check(address: String) -> Refusal? {
        let now = clock()
        let wait = state.withLock { $0.addresses.wait(for: address, at: now) }
        return wait.map { Refusal(limited: "client_address", retryAfterSeconds: Self.seconds($0)) }
    }

    /// Whether a sign-in with `token` from `address` may be tried now.
    func check(address: String, token: String) -> Refusal? {
        let now = clock()
        let key = Self.prefixKey(token)
        let (byAddress, byPrefix) = state.withLock { ($0.addresses.wait(for: address, at: now), $0.prefixes.wait(for: key, at: now)) }
        if let byAddress { return Refusal(limited: "client_address", retryAfterSeconds: Self.seconds(byAddress)) }
        if let byPrefix { return Refusal(limited: "token_prefix", retryAfterSeconds: Self.seconds(byPrefix)) }
        return nil
    }

    /// Counts a wrong token from `address`.
    func recordFailure(address: String, token: String) {
        let now = clock()
        let key = Self.prefixKey(token)
        state.withLock { state in
            state.addresses.recordFailure(of: address, at: now)
            state.prefixes.recordFailure(of: key, at: now)
        }
    }

    /// The key of a token's first 4 characters: a digest, so not even part of a token typed at
    /// sign-in stays in memory as text.
    static func prefixKey(_ token: String) -> String {
        Hex.encode(Array(SHA256.hash(data: Array(String(token.prefix(4)).utf8))).prefix(8))
    }

    private static func seconds(_ milliseconds: Int64) -> Int { Int((milliseconds + 999) / 1_000) }
}
