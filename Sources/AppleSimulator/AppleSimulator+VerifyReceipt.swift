import Foundation

/// What the HTTP layer writes back for one verifyReceipt call.
enum VerifyReceiptAnswer: Sendable, Equatable {
    /// HTTP 200 with this JSON body.
    case json(Data)
    /// This HTTP status, empty body.
    case httpStatus(Int)
}

extension AppleSimulator {
    /// Adds a failure rule for verifyReceipt (see `FailureRule`); rules apply in the order added.
    public func injectFailure(_ rule: FailureRule) {
        core.withLock { $0.failures.add(rule) }
    }

    /// Removes every failure rule: verifyReceipt answers normally again.
    public func clearFailures() {
        core.withLock { $0.failures.clear() }
    }

    /// The failure rules still active (spent `next(N)` rules are dropped).
    public var failureRules: [FailureRule] { core.withLock { $0.failures.rules } }

    /// Answers one verifyReceipt request body received on `endpoint`, failures included.
    ///
    /// A body that is not a JSON object answers 21000 as Apple does ("could not read the JSON
    /// object"); the rest is `SimulatorState.verifyReceipt`.
    func answerVerifyReceipt(_ body: Data, at endpoint: SimulatedEnvironment) async -> VerifyReceiptAnswer {
        let failure = core.withLock { core in
            core.verifyReceiptCalls[endpoint, default: 0] += 1
            return core.failures.failure(for: endpoint)
        }
        switch failure {
        case .status(let status)?:
            return Self.encode(.status(status))
        case .httpStatus(let code)?:
            return .httpStatus(code)
        case .malformedBody?:
            return .json(Data(#"{"status":0,"environment":"Production","receipt":{"in_app":[{"#.utf8))
        case .delay(let milliseconds)?:
            // Bounded so a forgotten rule cannot hold a connection forever.
            try? await Task.sleep(for: .milliseconds(min(max(milliseconds, 0), 120_000)))
        case nil:
            break
        }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            return Self.encode(.status(21000))
        }
        let receiptData = object["receipt-data"] as? String
        let password = object["password"] as? String
        let exclude = (object["exclude-old-transactions"] as? Bool)
            ?? ((object["exclude-old-transactions"] as? String).map { $0 == "true" }) ?? false
        let settings = verifySettings
        let answer = core.withLock {
            $0.state.verifyReceipt(
                receiptData: receiptData, password: password, excludeOldTransactions: exclude, at: endpoint,
                settings: settings)
        }
        return Self.encode(answer)
    }

    private static func encode(_ body: VerifyReceiptBody) -> VerifyReceiptAnswer {
        do {
            return .json(try AppleJSON.snakeCaseData(body))
        } catch {
            // Encoding plain strings and numbers cannot fail; answer as Apple's servers would.
            return .httpStatus(500)
        }
    }
}
