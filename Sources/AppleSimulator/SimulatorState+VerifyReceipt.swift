import Crypto

/// What the simulator needs besides its state to answer verifyReceipt like Apple.
struct VerifyReceiptSettings: Sendable {
    /// The app's shared secret; when set, a request with another `password` answers 21004.
    var sharedSecret: String?
    /// Key authenticating the simulator's receipt tokens.
    var receiptKey: SymmetricKey
    /// The app's Apple id (`adam_id` in production receipts).
    var appAppleId: Int64
    /// Seed of the deterministic shuffle of `latest_receipt_info`.
    var seed: UInt64
}

extension SimulatorState {
    /// Apple's answer to one verifyReceipt request received on `endpoint`.
    ///
    /// Statuses as Apple's: 21002 receipt-data missing or not base64; 21003 not a receipt this
    /// simulator issued; 21007 a sandbox receipt sent to production; 21008 the reverse; 21004
    /// wrong shared secret; otherwise 0 with the receipt's `in_app` as issued and, when the
    /// Apple ID has subscriptions, the live `latest_receipt_info` (unsorted, as Apple's),
    /// `latest_receipt` and `pending_renewal_info`.
    func verifyReceipt(
        receiptData: String?, password: String?, excludeOldTransactions: Bool,
        at endpoint: SimulatedEnvironment, settings: VerifyReceiptSettings
    ) -> VerifyReceiptBody {
        guard let receiptData else { return .status(21002) }
        let token: ReceiptToken
        do {
            token = try ReceiptToken.decode(receiptData, key: settings.receiptKey)
        } catch .malformed {
            return .status(21002)
        } catch {
            return .status(21003)
        }
        guard let snapshot = receipts[token.receiptNumber], let account = accounts[snapshot.appleId] else {
            return .status(21003)
        }
        switch (token.environment, endpoint) {
        case (.sandbox, .production): return .status(21007)
        case (.production, .sandbox): return .status(21008)
        default: break
        }
        if let secret = settings.sharedSecret, !secret.isEmpty, password != secret {
            return .status(21004, environment: endpoint)
        }
        let inApp = snapshot.inAppTransactionIds.compactMap { transactions[$0] }.map(TransactionBody.init)
        let receipt = receiptBody(account: account, snapshot: snapshot, settings: settings, inApp: inApp)
        var body = VerifyReceiptBody(
            status: 0, environment: account.environment.rawValue, receipt: receipt, latestReceiptInfo: nil,
            latestReceipt: nil, pendingRenewalInfo: nil, isRetryable: nil)
        let subscriptions = subscriptions(of: account.appleId)
        // Apple returns these three only for receipts of apps with auto-renewable subscriptions.
        if !subscriptions.isEmpty {
            let unified = unifiedReceipt(
                appleId: account.appleId, excludeOldTransactions: excludeOldTransactions, settings: settings)
            body.latestReceiptInfo = unified.latestReceiptInfo
            body.latestReceipt = unified.latestReceipt
            body.pendingRenewalInfo = unified.pendingRenewalInfo
        }
        return body
    }

    /// The live part of an answer: what verifyReceipt's top level and v1 notifications'
    /// `unified_receipt` both carry.
    func unifiedReceipt(
        appleId: String, excludeOldTransactions: Bool, settings: VerifyReceiptSettings
    ) -> (latestReceiptInfo: [TransactionBody], latestReceipt: String?, pendingRenewalInfo: [PendingRenewalBody]) {
        var latest = latestReceiptInfo(for: appleId)
        let subscriptions = subscriptions(of: appleId)
        if excludeOldTransactions {
            let current = Set(subscriptions.map(\.latestTransactionId))
            latest = latest.filter { $0.kind != .autoRenewable || current.contains($0.transactionId) }
        }
        // Apple's order is not chronological; a fixed shuffle per (seed, Apple ID, count) keeps
        // tests reproducible while no client can rely on order.
        var generator = SeededGenerator(seed: settings.seed ^ Self.stableHash(appleId) &+ UInt64(latest.count))
        latest.shuffle(using: &generator)
        let account = accounts[appleId]
        let token = account?.latestReceiptNumber.map {
            ReceiptToken(environment: account?.environment ?? .sandbox, receiptNumber: $0)
                .encoded(key: settings.receiptKey)
        }
        return (latest.map(TransactionBody.init), token, subscriptions.map(PendingRenewalBody.init))
    }

    private func receiptBody(
        account: SimulatedAccount, snapshot: ReceiptSnapshot, settings: VerifyReceiptSettings,
        inApp: [TransactionBody]
    ) -> ReceiptBody {
        let production = account.environment == .production
        return ReceiptBody(
            receiptType: production ? "Production" : "ProductionSandbox",
            adamId: production ? settings.appAppleId : 0, appItemId: production ? settings.appAppleId : 0,
            bundleId: account.bundleId, applicationVersion: "1", downloadId: production ? 1 : 0,
            versionExternalIdentifier: 0,
            receiptCreationDate: AppleDateFormat.gmt(snapshot.issuedMs),
            receiptCreationDateMs: String(snapshot.issuedMs),
            receiptCreationDatePst: AppleDateFormat.pst(snapshot.issuedMs),
            requestDate: AppleDateFormat.gmt(nowMs), requestDateMs: String(nowMs),
            requestDatePst: AppleDateFormat.pst(nowMs),
            originalPurchaseDate: AppleDateFormat.gmt(account.createdMs),
            originalPurchaseDateMs: String(account.createdMs),
            originalPurchaseDatePst: AppleDateFormat.pst(account.createdMs),
            originalApplicationVersion: "1.0", inApp: inApp)
    }

    /// FNV-1a: a hash that, unlike `Hasher`, is the same in every process.
    static func stableHash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
