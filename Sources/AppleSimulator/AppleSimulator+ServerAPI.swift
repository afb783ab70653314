import AppStore
import Foundation
import Primitives

/// The App Store Server API answered from the simulator's state: what tests read back, the
/// failure knobs, and the answers the routes (`ServerAPIRoutes`) send.
///
/// Each answer reads the state under the lock, then signs outside it at the simulated now,
/// like `signedTransaction(_:)`, so the ledger's `SignedDataVerifier` accepts it with the
/// simulator's root.
extension AppleSimulator {
    // MARK: - Reading back

    /// Every Send Consumption Information call accepted so far, oldest first.
    public var consumptionRequests: [RecordedConsumptionRequest] { core.withLock { $0.consumptionRequests } }

    /// Server API calls received so far, per endpoint: every call, refused or failed ones included.
    public var serverAPICalls: [ServerAPIEndpoint: Int] { core.withLock { $0.serverAPICalls } }

    /// Calls received so far on one Server API endpoint.
    public func serverAPICalls(to endpoint: ServerAPIEndpoint) -> Int {
        core.withLock { $0.serverAPICalls[endpoint] ?? 0 }
    }

    // MARK: - Failures

    /// Makes the next `count` Server API calls (to `endpoint`, or to any) answer `answer`,
    /// after `delay`. `.normal` with a delay makes Apple slow without failing.
    public func failNextServerAPICalls(
        _ count: Int, with answer: ServerAPIFailureRule.Answer, delay: Duration = .zero,
        endpoint: ServerAPIEndpoint? = nil
    ) {
        injectServerAPIFailure(
            ServerAPIFailureRule(answer, next: count, delayMilliseconds: Int(Millis.of(delay)), endpoint: endpoint))
    }

    /// Adds a Server API failure rule; rules apply in the order added.
    public func injectServerAPIFailure(_ rule: ServerAPIFailureRule) {
        core.withLock { $0.serverAPIFailures.add(rule) }
    }

    /// Removes every Server API failure rule.
    public func clearServerAPIFailures() {
        core.withLock { $0.serverAPIFailures.clear() }
    }

    /// The Server API failure rules still active (spent ones are dropped).
    public var serverAPIFailureRules: [ServerAPIFailureRule] { core.withLock { $0.serverAPIFailures.rules } }

    /// Counts a call and returns the failure rule covering it, if any.
    func beginServerAPICall(_ endpoint: ServerAPIEndpoint) -> ServerAPIFailureRule? {
        core.withLock { core in
            core.serverAPICalls[endpoint, default: 0] += 1
            return core.serverAPIFailures.take(for: endpoint)
        }
    }

    /// The app the Server API answers for: the JWT's `bid` once checked.
    var serverAPIBundleId: String { configuration.serverAPI?.bundleId ?? configuration.bundleId }

    // MARK: - Answers (JSON bodies; errors are `ServerAPIError`)

    /// Get Transaction Info.
    func serverAPITransactionInfo(_ transactionId: String, bundleId: String) throws -> Data {
        let (transaction, now) = try core.withLock { core in
            try (core.state.customer(owning: transactionId, bundleId: bundleId).transaction, core.state.nowMs)
        }
        let signed = try certificateAuthority.sign(SignedTransactionPayload(transaction, signedDate: now))
        return try AppleJSON.camelCaseData(ServerAPIBody.TransactionInfo(signedTransactionInfo: signed))
    }

    /// Get Transaction History (v2).
    func serverAPITransactionHistory(_ transactionId: String, parameters: [String: [String]], bundleId: String) throws -> Data {
        let query = try HistoryQuery(parameters: parameters)
        let (page, now) = try core.withLock { core in
            let account = try core.state.customer(owning: transactionId, bundleId: bundleId).account
            return (core.state.transactionHistory(of: account, query: query), core.state.nowMs)
        }
        return try AppleJSON.camelCaseData(
            ServerAPIBody.History(
                revision: PageToken.encode(page.position), hasMore: page.hasMore, bundleId: page.account.bundleId,
                appAppleId: configuration.appAppleId, environment: page.account.environment.rawValue,
                signedTransactions: try sign(page.transactions, at: now)))
    }

    /// Get Refund History (v2).
    func serverAPIRefundHistory(_ transactionId: String, parameters: [String: [String]], bundleId: String) throws -> Data {
        let after = try HistoryQuery.position(parameters["revision"]?.last)
        let (page, now) = try core.withLock { core in
            let account = try core.state.customer(owning: transactionId, bundleId: bundleId).account
            return (core.state.refundHistory(of: account, after: after), core.state.nowMs)
        }
        return try AppleJSON.camelCaseData(
            ServerAPIBody.RefundHistory(
                signedTransactions: try sign(page.transactions, at: now), revision: PageToken.encode(page.position),
                hasMore: page.hasMore))
    }

    /// Get All Subscription Statuses: the account's subscriptions, grouped by subscription group.
    func serverAPISubscriptionStatuses(_ transactionId: String, parameters: [String: [String]], bundleId: String) throws -> Data {
        let statuses = try HistoryQuery.statuses(parameters)
        let (account, lines, now) = try core.withLock { core in
            let account = try core.state.customer(owning: transactionId, bundleId: bundleId).account
            return (account, core.state.subscriptionStatuses(of: account, statuses: statuses), core.state.nowMs)
        }
        var groups: [ServerAPIBody.Statuses.Group] = []
        for line in lines {
            let item = ServerAPIBody.Statuses.LastTransaction(
                originalTransactionId: line.subscription.originalTransactionId, status: line.status,
                signedTransactionInfo: try certificateAuthority.sign(SignedTransactionPayload(line.latest, signedDate: now)),
                signedRenewalInfo: try certificateAuthority.sign(
                    SignedRenewalInfoPayload(
                        line.subscription, renewalProduct: line.renewalProduct, storefront: line.storefront,
                        startMs: line.startMs, signedDate: now)))
            let group = line.subscription.subscriptionGroup
            if let index = groups.firstIndex(where: { $0.subscriptionGroupIdentifier == group }) {
                groups[index].lastTransactions.append(item)
            } else {
                groups.append(.init(subscriptionGroupIdentifier: group, lastTransactions: [item]))
            }
        }
        return try AppleJSON.camelCaseData(
            ServerAPIBody.Statuses(
                environment: account.environment.rawValue, bundleId: account.bundleId,
                appAppleId: configuration.appAppleId, data: groups))
    }

    /// Look Up Order ID: status 0 with the order's transactions, or 1 for an unknown order.
    func serverAPIOrderLookup(_ orderId: String, bundleId: String) throws -> Data {
        let (transactions, now) = core.withLock { core in
            // Apple answers status 1 for a malformed id as for an unknown one.
            let found = AppleOrderId.isWellFormed(orderId) ? core.state.transactions(inOrder: orderId, bundleId: bundleId) : []
            return (found, core.state.nowMs)
        }
        guard !transactions.isEmpty else {
            return try AppleJSON.camelCaseData(ServerAPIBody.OrderLookup(status: 1, signedTransactions: nil))
        }
        return try AppleJSON.camelCaseData(
            ServerAPIBody.OrderLookup(status: 0, signedTransactions: try sign(transactions, at: now)))
    }

    /// Send Consumption Information (v2): checks the body as Apple does and records it.
    func serverAPISendConsumption(_ transactionId: String, body: Data, bundleId: String) throws {
        let receivedAt = machineNow
        try core.withLock { core in
            let transaction = try core.state.customer(owning: transactionId, bundleId: bundleId).transaction
            let information = try ConsumptionInformation(
                validating: body, isAutoRenewable: transaction.kind == .autoRenewable)
            core.consumptionRequests.append(
                RecordedConsumptionRequest(
                    transactionId: transactionId, information: information, rawBody: body, receivedAt: receivedAt,
                    simulatedNowMs: core.state.nowMs))
        }
    }

    /// Signs transactions as of `now` (simulated milliseconds), in order.
    func sign(_ transactions: [SimulatedTransaction], at now: Int64) throws -> [String] {
        try transactions.map { try certificateAuthority.sign(SignedTransactionPayload($0, signedDate: now)) }
    }
}
