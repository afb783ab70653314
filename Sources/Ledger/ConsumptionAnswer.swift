import AppStore

/// What to tell Apple about a refund request (CONSUMPTION_REQUEST), decided from the ledger's
/// records alone, so a replay gives the same answer: nothing without the user's consent, else
/// how much was used and whether it was delivered.
public enum ConsumptionAnswer {
    public enum Verdict: Sendable, Hashable {
        case send(ConsumptionRequest, userId: String)
        /// `no_consent` or `unknown_transaction`.
        case withhold(reason: String, userId: String?)
    }

    /// - Parameters:
    ///   - record: what the ledger recorded of the transaction Apple asks about (nil: never seen).
    ///   - consent: the user's latest consent.
    ///   - wallet: the user's wallet of the purchase's unit (consumables).
    ///   - nowMs: for the time used of a non-renewing subscription.
    public static func decide(
        record: TransactionRecord?, consent: ConsumptionConsentRecorded?, wallet: Wallet?, nowMs: Int64,
        refundPreference: String?, sampleContentProvided: Bool
    ) -> Verdict {
        guard let record else { return .withhold(reason: "unknown_transaction", userId: nil) }
        let user = record.userId
        guard consent?.consumptionData == true else { return .withhold(reason: "no_consent", userId: user) }
        var percentage: Int64?
        if case .delivered(let delivery) = record {
            switch delivery.kind {
            case .consumable:
                percentage = wallet?.consumedMilliunits(of: delivery.transactionId)
            case .nonRenewing:
                // Time used of the period bought, when the period is known.
                if let start = delivery.purchaseDateMs, let end = delivery.expiresDateMs, end > start {
                    percentage = min(100_000, max(0, (nowMs - start) * 100_000 / (end - start)))
                }
            case .nonConsumable:
                // Delivered whole the moment it was bought.
                percentage = 100_000
            case .autoRenewable:
                // Apple takes no percentage for auto-renewable subscriptions.
                percentage = nil
            }
        }
        // A preference to grant a prorated refund needs a percentage above zero (Apple's rule).
        let preference = refundPreference == "GRANT_PRORATED" && (percentage ?? 0) == 0 ? nil : refundPreference
        return .send(
            ConsumptionRequest(
                customerConsented: true, consumptionPercentage: percentage, deliveryStatus: "DELIVERED", refundPreference: preference,
                sampleContentProvided: sampleContentProvided),
            userId: user)
    }
}
