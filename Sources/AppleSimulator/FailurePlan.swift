/// How a verifyReceipt call should misbehave instead of answering normally.
public enum FailureMode: Sendable, Hashable, Codable {
    /// Answer HTTP 200 with `{"status": N}` (21005, 21009, 21100–21199 with `is-retryable`...).
    case status(Int)
    /// Answer this HTTP status with an empty body (e.g. 500, 503).
    case httpStatus(Int)
    /// Wait this many milliseconds, then answer normally: past a client's time-out it is one.
    case delay(milliseconds: Int)
    /// Answer HTTP 200 with a body that is not JSON (cut off mid-object).
    case malformedBody
}

/// One rule of failure injection: a mode, for the next N calls or a fraction of calls,
/// optionally only on one endpoint.
public struct FailureRule: Sendable, Hashable, Codable {
    /// How many calls a rule covers.
    public enum Scope: Sendable, Hashable, Codable {
        /// The next N matching calls, then the rule is spent.
        case next(Int)
        /// Each matching call with this probability (0...1), drawn from the seeded generator.
        case fraction(Double)
    }

    public var mode: FailureMode
    public var scope: Scope
    /// Only calls to this endpoint; nil: both.
    public var endpoint: SimulatedEnvironment?

    public init(_ mode: FailureMode, _ scope: Scope, endpoint: SimulatedEnvironment? = nil) {
        self.mode = mode
        self.scope = scope
        self.endpoint = endpoint
    }
}

/// The active failure rules, consulted in order on every verifyReceipt call.
///
/// Deterministic: fractions draw from a `SeededGenerator`, so a test with a fixed seed sees the
/// same calls fail on every run.
struct FailurePlan: Sendable {
    private(set) var rules: [FailureRule] = []
    private var generator: SeededGenerator

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    mutating func add(_ rule: FailureRule) {
        if case .next(let n) = rule.scope, n <= 0 { return }
        rules.append(rule)
    }

    mutating func clear() {
        rules.removeAll()
    }

    /// The failure for this call, if any rule applies; spends one use of a `next(N)` rule.
    mutating func failure(for endpoint: SimulatedEnvironment) -> FailureMode? {
        for index in rules.indices {
            let rule = rules[index]
            if let only = rule.endpoint, only != endpoint { continue }
            switch rule.scope {
            case .next(let remaining):
                guard remaining > 0 else { continue }
                if remaining == 1 {
                    rules.remove(at: index)
                } else {
                    rules[index].scope = .next(remaining - 1)
                }
                return rule.mode
            case .fraction(let probability):
                if Double.random(in: 0..<1, using: &generator) < probability { return rule.mode }
            }
        }
        return nil
    }
}
