import Synchronization

/// What the load saw while PostgreSQL was stopped and started: each answer judged against the
/// phase it was sent and answered in. A request sent and answered while the database was down
/// must be 503 `database_unavailable` with `Retry-After`; any other answer is the route's
/// success or that same 503, never another status.
final class OutageLog: Sendable {
    enum Phase: Sendable, Equatable {
        case up, stopping, down, starting, recovered, stopped
    }

    struct Snapshot: Sendable {
        var phase: Phase = .up
        /// Transaction ids answered 200 `delivered` or `already_delivered`.
        var delivered: Set<String> = []
        var deliveredAfterRecovery = 0
        /// Answers of requests sent and answered while the database was down.
        var strictlyDown = 0
        /// Purchases whose receipt was answered 503: to be sent again later.
        var refused: [Bought] = []
        var bought: [Bought] = []
        var violations: [String] = []
    }

    private let state = Mutex(Snapshot())

    var snapshot: Snapshot { state.withLock { $0 } }
    var phase: Phase { state.withLock { $0.phase } }

    func set(_ phase: Phase) {
        state.withLock { $0.phase = phase }
    }

    func violation(_ text: String) {
        state.withLock { $0.violations.append(text) }
    }

    /// An answer of `route`, sent in phase `start`, whose success status is `success`.
    func record(_ route: String, _ answer: LedgerHarness.Answer, from start: Phase, success: Int) {
        state.withLock { state in
            if start == .down && state.phase == .down { state.strictlyDown += 1 }
            if let problem = Self.problem(answer, from: start, now: state.phase, success: success) {
                state.violations.append("\(route): \(problem)")
            }
        }
    }

    /// A receipt's answer, sent in phase `start`, for the purchase `bought`.
    func record(receipt answer: LedgerHarness.Answer, from start: Phase, bought: Bought) {
        let submitted = Submitted(answer)
        state.withLock { state in
            state.bought.append(bought)
            if start == .down && state.phase == .down { state.strictlyDown += 1 }
            if let problem = Self.problem(answer, from: start, now: state.phase, success: 200) {
                state.violations.append("POST /v1/receipts \(bought.purchase.transactionId): \(problem)")
            }
            if answer.status == 503 {
                state.refused.append(bought)
            } else if answer.status == 200, ["delivered", "already_delivered"].contains(submitted.outcome ?? "") {
                state.delivered.formUnion(submitted.transactionIds)
                if start == .recovered { state.deliveredAfterRecovery += 1 }
            }
        }
    }

    private static func problem(_ answer: LedgerHarness.Answer, from start: Phase, now: Phase, success: Int) -> String? {
        let unavailable = answer.status == 503 && answer.errorCode == "database_unavailable" && answer.header("Retry-After") != nil
        if start == .down && now == .down {
            return unavailable ? nil : "HTTP \(answer.status) \(answer.json) while PostgreSQL was down"
        }
        return answer.status == success || unavailable ? nil : "HTTP \(answer.status) \(answer.json)"
    }
}
