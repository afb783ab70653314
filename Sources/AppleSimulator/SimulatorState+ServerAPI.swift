/// One page of transactions for Get Transaction History or Get Refund History, before signing.
struct TransactionPage: Sendable {
    /// The Apple account asked about; its environment and bundle are the answer's.
    var account: SimulatedAccount
    var transactions: [SimulatedTransaction]
    /// Where the next page starts: the place of the last transaction listed, or the place asked
    /// from when none was (so a client can keep the token and later get only what changed).
    var position: Int64
    var hasMore: Bool
}

/// One subscription's line in Get All Subscription Statuses, before signing.
struct SubscriptionStatusLine: Sendable {
    var subscription: SimulatedSubscription
    var latest: SimulatedTransaction
    /// The product the next renewal bills, for `renewalPrice`.
    var renewalProduct: SimulatedProduct?
    /// The storefront the next renewal bills in (the Apple ID's now), for `renewalPrice`'s
    /// currency.
    var storefront: String
    /// `recentSubscriptionStartDate` of the renewal info.
    var startMs: Int64
    /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    var status: Int
}

/// The App Store Server API's questions, answered from the state. Answers are per Apple
/// account (so per environment: an account lives in one) and per app (`bundleId`).
extension SimulatorState {
    /// Apple's page size for transaction and refund history.
    static let serverAPIPageSize = 20

    /// The transaction and the account owning it, as the Server API sees them: an id that is not
    /// a number is 400 4000006; an unknown one, or one of another app, 404 4040010.
    func customer(
        owning transactionId: String, bundleId: String
    ) throws -> (account: SimulatedAccount, transaction: SimulatedTransaction) {
        guard !transactionId.isEmpty, transactionId.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw ServerAPIError.invalidTransactionId
        }
        guard let transaction = transactions[transactionId], transaction.bundleId == bundleId,
            let account = accounts[transaction.appleId]
        else { throw ServerAPIError.transactionIdNotFound }
        return (account, transaction)
    }

    /// Every transaction of the account that `query` admits, renewals and finished consumables
    /// included, in the order they last changed (ascending or descending), 20 a page.
    func transactionHistory(of account: SimulatedAccount, query: HistoryQuery) -> TransactionPage {
        page(of: account, descending: query.descending, after: query.after, where: query.admits)
    }

    /// The account's refunded transactions (not Family Sharing revocations, nor upgrades), in
    /// the order they were refunded, 20 a page.
    func refundHistory(of account: SimulatedAccount, after: Int64?) -> TransactionPage {
        page(of: account, descending: false, after: after) { transaction in
            transaction.isRefunded && transaction.revocationType != "FAMILY_REVOKE"
        }
    }

    private func page(
        of account: SimulatedAccount, descending: Bool, after: Int64?,
        where admits: (SimulatedTransaction) -> Bool
    ) -> TransactionPage {
        var entries = account.transactionIds.compactMap { id -> (position: Int64, transaction: SimulatedTransaction)? in
            guard let transaction = transactions[id], let position = modificationOrder[id], admits(transaction) else {
                return nil
            }
            if let after, descending ? position >= after : position <= after { return nil }
            return (position, transaction)
        }
        entries.sort { descending ? $0.position > $1.position : $0.position < $1.position }
        let page = entries.prefix(Self.serverAPIPageSize)
        return TransactionPage(
            account: account, transactions: page.map { $0.transaction },
            position: page.last?.position ?? after ?? (descending ? Int64.max : 0),
            hasMore: entries.count > page.count)
    }

    /// The account's subscriptions (one per group here), with the status Apple would report
    /// now; `statuses` non-empty keeps only those.
    func subscriptionStatuses(of account: SimulatedAccount, statuses: Set<Int>) -> [SubscriptionStatusLine] {
        subscriptions(of: account.appleId).compactMap { subscription -> SubscriptionStatusLine? in
            guard let latest = transactions[subscription.latestTransactionId] else { return nil }
            let status = subscriptionStatus(subscription)
            guard statuses.isEmpty || statuses.contains(status) else { return nil }
            return SubscriptionStatusLine(
                subscription: subscription, latest: latest,
                renewalProduct: products[subscription.autoRenewProductId], storefront: account.storefront,
                startMs: transactions[subscription.originalTransactionId]?.purchaseDateMs ?? latest.purchaseDateMs,
                status: status)
        }
    }

    /// The transactions of an Apple order, for Look Up Order ID; empty when unknown.
    func transactions(inOrder orderId: String, bundleId: String) -> [SimulatedTransaction] {
        (transactionIdsByOrderId[orderId] ?? []).compactMap { transactions[$0] }.filter { $0.bundleId == bundleId }
    }
}
