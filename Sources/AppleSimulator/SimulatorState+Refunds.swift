/// What Apple does to a transaction after the sale: refunds, Family Sharing revocations and
/// the consumption requests it sends while it weighs a refund.
extension SimulatorState {
    /// Refunds a transaction at the simulated now (`cancellation_date_ms`, `cancellation_reason`
    /// 0 other / 1 app issue). Refunding a subscription's current period ends the subscription.
    ///
    /// `percentage` (thousandths of a percent, 1...100000) refunds a share: below 100000 the
    /// transaction is signed `REFUND_PRORATED` with that `revocationPercentage`; nil or 100000
    /// is a full refund (`REFUND_FULL`, no percentage). Access ends either way: the simulator
    /// does not model a prorated refund that leaves the purchase in force.
    ///
    /// v2 says REFUND for every product type. v1 said REFUND only for consumables,
    /// non-consumables and non-renewing subscriptions; a refunded auto-renewable was CANCEL.
    mutating func refund(_ transactionId: String, reason: Int, percentage: Int64? = nil) throws -> PurchaseOutcome {
        guard reason == 0 || reason == 1 else {
            throw SimulatorError(.invalidRequest, "cancellation_reason is 0 (other) or 1 (app issue)")
        }
        if let percentage, !(1...100_000).contains(percentage) {
            throw SimulatorError(
                .invalidRequest, "revocationPercentage is thousandths of a percent, 1...100000, not \(percentage)")
        }
        let prorated = percentage.flatMap { $0 < 100_000 ? $0 : nil }
        let transaction = try endAccess(
            transactionId, reason: reason, revocationType: prorated == nil ? "REFUND_FULL" : "REFUND_PRORATED",
            percentage: prorated)
        let v1Type = transaction.kind == .autoRenewable ? "CANCEL" : "REFUND"
        return PurchaseOutcome(
            transaction: transaction, receiptNumber: nil, events: [event(v1Type, "REFUND", nil, transaction)])
    }

    /// Revokes a transaction at the simulated now, as when a Family Sharing purchaser stops
    /// sharing it or leaves the family: `revocationDate` set, no `revocationReason`,
    /// `revocationType` FAMILY_REVOKE. The simulator has no family groups, so the Apple ID
    /// loses its own transaction, which is what the app's server of the family member sees.
    mutating func revoke(_ transactionId: String) throws -> PurchaseOutcome {
        let transaction = try endAccess(transactionId, reason: nil, revocationType: "FAMILY_REVOKE")
        return PurchaseOutcome(
            transaction: transaction, receiptNumber: nil, events: [event("REVOKE", "REVOKE", nil, transaction)])
    }

    /// Apple reverses a refund it granted (REFUND_REVERSED; v2 only): the transaction is paid
    /// and in force again, its revocation fields cleared.
    mutating func reverseRefund(_ transactionId: String) throws -> PurchaseOutcome {
        var transaction = try self.transaction(transactionId)
        guard transaction.cancellationDateMs != nil, transaction.revocationType != "FAMILY_REVOKE" else {
            throw SimulatorError(.invalidRequest, "transaction \(transactionId) is not refunded")
        }
        transaction.cancellationDateMs = nil
        transaction.cancellationReason = nil
        transaction.revocationType = nil
        transaction.revocationPercentage = nil
        transactions[transactionId] = transaction
        markModified(transactionId)
        return PurchaseOutcome(transaction: transaction, receiptNumber: nil, events: [event(nil, "REFUND_REVERSED", nil, transaction)])
    }

    /// The customer asked Apple for a refund of `transactionId`: Apple asks the app's server for
    /// consumption data (CONSUMPTION_REQUEST) and changes nothing until it decides (`refund`).
    ///
    /// `reason` is Apple's `consumptionRequestReason`, kept as given so tests can send values the
    /// ledger does not know: UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE,
    /// LEGAL, OTHER.
    func requestConsumption(_ transactionId: String, reason: String) throws -> PurchaseOutcome {
        let transaction = try self.transaction(transactionId)
        guard !transaction.isRefunded else {
            throw SimulatorError(.invalidRequest, "transaction \(transactionId) is already refunded or revoked")
        }
        guard !reason.isEmpty else {
            throw SimulatorError(.invalidRequest, "consumptionRequestReason must not be empty")
        }
        var request = event("CONSUMPTION_REQUEST", "CONSUMPTION_REQUEST", nil, transaction)
        request.consumptionRequestReason = reason
        return PurchaseOutcome(transaction: transaction, receiptNumber: nil, events: [request])
    }

    /// Ends access to a transaction now: the common part of refunds and revocations. When it is
    /// a subscription's current period, the subscription ends too (status 5, revoked).
    private mutating func endAccess(
        _ transactionId: String, reason: Int?, revocationType: String, percentage: Int64? = nil
    ) throws -> SimulatedTransaction {
        var transaction = try self.transaction(transactionId)
        guard transaction.cancellationDateMs == nil else {
            throw SimulatorError(.invalidRequest, "transaction \(transactionId) is already cancelled")
        }
        transaction.cancellationDateMs = nowMs
        transaction.cancellationReason = reason
        transaction.revocationType = revocationType
        transaction.revocationPercentage = percentage
        transactions[transactionId] = transaction
        markModified(transactionId)
        if var subscription = subscriptions[transaction.originalTransactionId],
            subscription.latestTransactionId == transactionId
        {
            subscription.isRevoked = true
            subscription.hasEnded = true
            subscription.autoRenewEnabled = false
            subscription.leaveBillingRetry()
            subscriptions[subscription.originalTransactionId] = subscription
        }
        return transaction
    }
}
