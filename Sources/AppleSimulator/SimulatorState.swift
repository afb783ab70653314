import Foundation

/// Everything the simulated App Store knows, as a plain value mutated under the simulator's lock.
///
/// Operations are deterministic functions of the state and their arguments: ids come from
/// counters, time from `nowMs` (simulated, milliseconds since 1970 UTC), never from the wall.
struct SimulatorState: Sendable {
    static let dayMs: Int64 = 86_400_000

    var nowMs: Int64
    var defaultBundleId: String
    var products: [String: SimulatedProduct]
    var accounts: [String: SimulatedAccount] = [:]
    var transactions: [String: SimulatedTransaction] = [:]
    /// Keyed by `original_transaction_id`.
    var subscriptions: [String: SimulatedSubscription] = [:]
    var receipts: [Int: ReceiptSnapshot] = [:]
    /// Original transaction ids of each Apple ID's subscriptions, in the order they began, so
    /// answering one receipt never scans every subscription.
    var subscriptionIdsByAppleId: [String: [String]] = [:]
    /// Transaction ids per Apple order id (Look Up Order ID).
    var transactionIdsByOrderId: [String: [String]] = [:]
    /// Each transaction's place in the order of last change (bought, renewed, refunded, revoked,
    /// upgraded away): Apple sorts transaction history by the date a transaction last changed,
    /// and a `revision` token resumes after a place in that order, so a changed transaction
    /// shows up again to a client that pages on from its last token.
    private(set) var modificationOrder: [String: Int64] = [:]
    /// Renewal-date extensions granted, the answers kept per `requestIdentifier`, and the mass
    /// extension requests (`SimulatorState+Extensions`).
    var renewalExtensions = RenewalExtensionRecords()
    /// Set App Account Token requests answered with success, so a test can tell whether the
    /// ledger asked Apple again.
    var appAccountTokensSet = 0

    // Apple's ids are numeric strings in separate ranges per environment; counters keep them
    // unique and reproducible.
    private var nextProductionTransaction: Int64 = 340_000_000_000_001
    private var nextSandboxTransaction: Int64 = 2_000_000_100_000_001
    private var nextWebOrderLineItem: Int64 = 1_000_000_060_000_001
    private var nextReceiptNumber = 1
    private var nextOrder: UInt64 = 1
    private var nextModification: Int64 = 1

    init(nowMs: Int64, bundleId: String, products: [SimulatedProduct], idOffset: Int64 = 0) {
        nextProductionTransaction += idOffset
        nextSandboxTransaction += idOffset
        nextWebOrderLineItem += idOffset
        self.nowMs = nowMs
        self.defaultBundleId = bundleId
        self.products = Dictionary(products.map { ($0.productId, $0) }, uniquingKeysWith: { _, last in last })
    }

    // MARK: - Ids

    mutating func newTransactionId(_ environment: SimulatedEnvironment) -> String {
        switch environment {
        case .production:
            defer { nextProductionTransaction += 1 }
            return String(nextProductionTransaction)
        case .sandbox:
            defer { nextSandboxTransaction += 1 }
            return String(nextSandboxTransaction)
        }
    }

    mutating func newWebOrderLineItemId() -> String {
        defer { nextWebOrderLineItem += 1 }
        return String(nextWebOrderLineItem)
    }

    mutating func newOrderId() -> String {
        defer { nextOrder += 1 }
        return AppleOrderId.make(nextOrder)
    }

    /// Moves a transaction to the end of the order of last change; call on every change Apple
    /// would date (see `modificationOrder`).
    mutating func markModified(_ transactionId: String) {
        modificationOrder[transactionId] = nextModification
        nextModification += 1
    }

    // MARK: - Look-ups that throw the control API's errors

    func product(_ productId: String) throws -> SimulatedProduct {
        guard let product = products[productId] else {
            throw SimulatorError(.unknownProduct, "no product \(productId) in the simulator's catalog")
        }
        return product
    }

    func transaction(_ transactionId: String) throws -> SimulatedTransaction {
        guard let transaction = transactions[transactionId] else {
            throw SimulatorError(.unknownTransaction, "no transaction \(transactionId)")
        }
        return transaction
    }

    func subscription(_ originalTransactionId: String) throws -> SimulatedSubscription {
        guard let subscription = subscriptions[originalTransactionId] else {
            throw SimulatorError(.unknownSubscription, "no subscription \(originalTransactionId)")
        }
        return subscription
    }

    // MARK: - Accounts and receipts

    /// The Apple ID, created on first use; an existing one must be in the same environment.
    mutating func account(
        _ appleId: String, environment: SimulatedEnvironment, bundleId: String?
    ) throws -> SimulatedAccount {
        if let existing = accounts[appleId] {
            guard existing.environment == environment else {
                throw SimulatorError(
                    .environmentMismatch, "Apple ID \(appleId) is a \(existing.environment.rawValue) account")
            }
            return existing
        }
        let account = SimulatedAccount(
            appleId: appleId, environment: environment, bundleId: bundleId ?? defaultBundleId,
            createdMs: nowMs, transactionIds: [], latestReceiptNumber: nil)
        accounts[appleId] = account
        return account
    }

    /// Issues the receipt the device now holds: the device-made transactions still in it
    /// (finished consumables drop out, as on a device).
    ///
    /// - Parameter refreshed: a receipt fetched from Apple (`SKReceiptRefreshRequest`) rather
    ///   than updated by a purchase; Apple's list every renewal in `in_app` as well.
    @discardableResult
    mutating func issueReceipt(for appleId: String, refreshed: Bool = false) throws -> Int {
        guard var account = accounts[appleId] else {
            throw SimulatorError(.unknownAccount, "no Apple ID \(appleId)")
        }
        let inApp = account.transactionIds.filter { id in
            guard let t = transactions[id], t.isDevicePurchase || refreshed else { return false }
            return !(t.kind == .consumable && t.isFinished)
        }
        let number = nextReceiptNumber
        nextReceiptNumber += 1
        receipts[number] = ReceiptSnapshot(
            number: number, appleId: appleId, environment: account.environment, issuedMs: nowMs,
            inAppTransactionIds: inApp, isRefreshed: refreshed)
        account.latestReceiptNumber = number
        accounts[appleId] = account
        return number
    }

    /// Every transaction Apple lists in `latest_receipt_info` for the Apple ID: unfinished
    /// consumables, non-consumables and all subscription transactions including renewals.
    func latestReceiptInfo(for appleId: String) -> [SimulatedTransaction] {
        guard let account = accounts[appleId] else { return [] }
        return account.transactionIds.compactMap { transactions[$0] }
            .filter { !($0.kind == .consumable && $0.isFinished) }
    }

    /// The Apple ID's subscriptions, one per group, in the order they began.
    func subscriptions(of appleId: String) -> [SimulatedSubscription] {
        subscriptionIdsByAppleId[appleId, default: []].compactMap { subscriptions[$0] }
    }

    mutating func record(_ transaction: SimulatedTransaction) {
        transactions[transaction.transactionId] = transaction
        accounts[transaction.appleId]?.transactionIds.append(transaction.transactionId)
        transactionIdsByOrderId[transaction.orderId, default: []].append(transaction.transactionId)
        markModified(transaction.transactionId)
    }

    mutating func finish(_ transactionId: String) throws {
        var transaction = try self.transaction(transactionId)
        transaction.isFinished = true
        transactions[transactionId] = transaction
    }
}
