import Foundation

/// Finish Transaction, answered from the state, and what tests read back of it.
extension AppleSimulator {
    /// Every Finish Transaction call accepted so far, oldest first (a transaction finished
    /// twice is listed twice).
    public var finishRequests: [RecordedFinishRequest] { core.withLock { $0.finishRequests } }

    /// How many Finish Transaction calls each transaction received, by transaction id.
    public var finishRequestCounts: [String: Int] {
        core.withLock { core in
            core.finishRequests.reduce(into: [String: Int]()) { counts, request in counts[request.transactionId, default: 0] += 1 }
        }
    }

    /// Finish Transaction: marks the transaction finished, as `finish(transactionId:)` does
    /// for the device (a finished consumable leaves later receipts), and records the call. An
    /// id that is not a number is 400 4000006; unknown or of another app 404 4040010.
    func serverAPIFinishTransaction(_ transactionId: String, bundleId: String) throws {
        let receivedAt = machineNow
        try core.withLock { core in
            let transaction = try core.state.customer(owning: transactionId, bundleId: bundleId).transaction
            try core.state.finish(transaction.transactionId)
            core.finishRequests.append(
                RecordedFinishRequest(
                    transactionId: transactionId, wasAlreadyFinished: transaction.isFinished,
                    simulatedNowMs: core.state.nowMs, receivedAt: receivedAt))
        }
    }
}
