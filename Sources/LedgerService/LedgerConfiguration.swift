import Foundation
import Ledger
import LedgerStore
import Sealing

/// The settings of the purchase flow (docs/configuration.md).
public struct LedgerConfiguration: Sendable {
    /// Every app configured, with its secret, Apple id and catalog (one, for now): the one
    /// place the app's settings are kept.
    public var apps: LedgerApps
    /// The app served (`APPLE_BUNDLE_ID`, or the one app of `LEDGER_APPS`): receipts and signed
    /// data for another app are rejected.
    public var bundleId: String { apps.first.bundleId }
    /// The app's shared secret: checked on v1 notifications (and sent to verifyReceipt).
    public var sharedSecret: String? { apps.first.sharedSecret }
    /// `LEDGER_TRANSFER_POLICY`.
    public var transferPolicy: TransferPolicy
    /// How the retry worker spaces its attempts at a pending receipt.
    public var retry: RetryPolicy
    /// How long a read waits for the projections to reach the log's head before it answers 503.
    public var readYourWritesTimeout: Duration
    /// `LEDGER_COMMISSION`: Apple's commission in revenue reports.
    public var commission: CommissionPlan
    /// `LEDGER_REFUND_PREFERENCE`: `refundPreference` in consumption answers (`DECLINE`,
    /// `GRANT_FULL`, `GRANT_PRORATED`), nil to omit it.
    public var refundPreference: String?
    /// `LEDGER_SAMPLE_CONTENT_PROVIDED`: `sampleContentProvided` in consumption answers.
    public var sampleContentProvided: Bool = false
    /// `LEDGER_RECONCILE_INTERVAL`: how often `serve` reconciles with Apple; nil never.
    public var reconcileInterval: Duration? = .seconds(3600)
    /// How often `serve` asks Apple's Get Transaction Info about the sales seen only in
    /// receipts (when the Server API is configured); nil never. Not an environment setting:
    /// tests and embedders set it.
    public var transactionInfoInterval: Duration? = .seconds(60)
    /// How often `serve` reads Apple's price points (when the App Store Connect API is
    /// configured), the first pass at start; nil never. Not an environment setting: tests and
    /// embedders set it.
    public var pricePointInterval: Duration? = .seconds(86_400)
    /// `LEDGER_FINISH_TRANSACTIONS=1`: `serve` finishes each delivered transaction with Apple
    /// (when the Server API is configured), a pass every `finishInterval`.
    public var finishTransactions = false
    public var finishInterval: Duration = .seconds(2)
    /// `LEDGER_KEY_ENCRYPTION_KEY`: the people's keys are stored wrapped under it, so a dump of
    /// the database alone reads no one (docs/erasure.md); nil: stored as they are.
    public var keyEncryptionKey: KeyEncryptionKey?
    /// `LEDGER_ERASURE_JOURNAL`: every erasure is also written to this file outside the database,
    /// so one a restore undoes is done again (`ErasureJournal`); nil: none is kept.
    public var erasureJournal: ErasureJournal?

    /// One app, with nothing but its bundle id and secret (tests, benches).
    public init(
        bundleId: String, sharedSecret: String? = nil, transferPolicy: TransferPolicy = .keep,
        retry: RetryPolicy = RetryPolicy(), readYourWritesTimeout: Duration = .seconds(5), commission: CommissionPlan = .standard
    ) {
        self.init(
            apps: LedgerApps(only: AppSettings(bundleId: bundleId, sharedSecret: sharedSecret)), transferPolicy: transferPolicy, retry: retry,
            readYourWritesTimeout: readYourWritesTimeout, commission: commission)
    }

    public init(
        apps: LedgerApps, transferPolicy: TransferPolicy = .keep, retry: RetryPolicy = RetryPolicy(),
        readYourWritesTimeout: Duration = .seconds(5), commission: CommissionPlan = .standard
    ) {
        self.apps = apps
        self.transferPolicy = transferPolicy
        self.retry = retry
        self.readYourWritesTimeout = readYourWritesTimeout
        self.commission = commission
    }

    /// Reads `LEDGER_COMMISSION` (`standard` when unset or empty).
    public static func commission(from environment: [String: String]) throws(LedgerServiceError) -> CommissionPlan {
        let text = environment["LEDGER_COMMISSION"].flatMap { $0.isEmpty ? nil : $0 } ?? CommissionPlan.standard.rawValue
        guard let plan = CommissionPlan(rawValue: text) else {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_COMMISSION is standard or small_business, not \(text)")
        }
        return plan
    }

    /// Reads the apps (`LEDGER_APPS`, or `APPLE_BUNDLE_ID` with `APPLE_SHARED_SECRET`,
    /// `APPLE_APP_APPLE_ID` and `LEDGER_CATALOG`), `LEDGER_TRANSFER_POLICY` and `LEDGER_COMMISSION`.
    public init(environment: [String: String]) throws(LedgerServiceError) {
        let apps = try LedgerApps(environment: environment)
        let policyText = environment["LEDGER_TRANSFER_POLICY"].flatMap { $0.isEmpty ? nil : $0 } ?? "keep"
        guard let policy = TransferPolicy(rawValue: policyText) else {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_TRANSFER_POLICY is keep or transfer, not \(policyText)")
        }
        self.init(apps: apps, transferPolicy: policy, commission: try Self.commission(from: environment))
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch value("LEDGER_REFUND_PREFERENCE") ?? "none" {
        case "none": refundPreference = nil
        case "decline": refundPreference = "DECLINE"
        case "grant_full": refundPreference = "GRANT_FULL"
        case "grant_prorated": refundPreference = "GRANT_PRORATED"
        case let other:
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_REFUND_PREFERENCE is none, decline, grant_full or grant_prorated, not \(other)")
        }
        switch value("LEDGER_SAMPLE_CONTENT_PROVIDED") ?? "false" {
        case "true", "1": sampleContentProvided = true
        case "false", "0": sampleContentProvided = false
        case let other: throw LedgerServiceError(.invalidConfiguration, "LEDGER_SAMPLE_CONTENT_PROVIDED is true or false, not \(other)")
        }
        let interval = value("LEDGER_RECONCILE_INTERVAL") ?? "3600"
        guard let seconds = Int(interval), seconds >= 0 else {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_RECONCILE_INTERVAL is whole seconds (0 = never), not \(interval)")
        }
        reconcileInterval = seconds == 0 ? nil : .seconds(seconds)
        switch value("LEDGER_FINISH_TRANSACTIONS") ?? "0" {
        case "1", "true": finishTransactions = true
        case "0", "false": finishTransactions = false
        case let other: throw LedgerServiceError(.invalidConfiguration, "LEDGER_FINISH_TRANSACTIONS is 1 or unset, not \(other)")
        }
        keyEncryptionKey = try Self.keyEncryptionKey(environment: environment)
        erasureJournal = try Self.erasureJournal(environment: environment)
    }

    /// `LEDGER_ERASURE_JOURNAL`'s journal; nil when unset or empty. Refused at start when it
    /// cannot be written, not at the first erasure.
    public static func erasureJournal(environment: [String: String]) throws(LedgerServiceError) -> ErasureJournal? {
        guard let path = environment["LEDGER_ERASURE_JOURNAL"], !path.isEmpty else { return nil }
        let journal = ErasureJournal(path: path)
        guard journal.isWritable else {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_ERASURE_JOURNAL \(path) cannot be written (a file this user may append to, in a folder that exists)")
        }
        return journal
    }

    /// `LEDGER_KEY_ENCRYPTION_KEY`'s key; nil when unset or empty.
    public static func keyEncryptionKey(environment: [String: String]) throws(LedgerServiceError) -> KeyEncryptionKey? {
        guard let file = environment["LEDGER_KEY_ENCRYPTION_KEY"], !file.isEmpty else { return nil }
        return try keyEncryptionKey(file: file)
    }

    /// The key a `LEDGER_KEY_ENCRYPTION_KEY` file holds: 32 bytes, or 64 hexadecimal digits.
    static func keyEncryptionKey(file: String) throws(LedgerServiceError) -> KeyEncryptionKey {
        guard let contents = FileManager.default.contents(atPath: file) else {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_KEY_ENCRYPTION_KEY \(file) cannot be read")
        }
        do {
            return try KeyEncryptionKey(fileContents: Array(contents))
        } catch {
            throw LedgerServiceError(
                .invalidConfiguration, "LEDGER_KEY_ENCRYPTION_KEY \(file) holds neither 32 bytes nor 64 hexadecimal digits")
        }
    }
}

/// Exponential backoff with jitter for receipts Apple could not verify yet.
public struct RetryPolicy: Sendable, Hashable {
    /// The delay before the first retry.
    public var base: Duration
    /// The longest delay between two attempts.
    public var maximum: Duration
    /// What the client is told to wait before resubmitting (`retry_after_seconds`).
    public var clientRetryAfterSeconds: Int

    public init(base: Duration = .seconds(2), maximum: Duration = .seconds(300), clientRetryAfterSeconds: Int = 30) {
        self.base = base
        self.maximum = maximum
        self.clientRetryAfterSeconds = clientRetryAfterSeconds
    }

    /// The delay after attempt number `attempt` (1-based): base·2^(attempt−1), capped, then
    /// "full jitter" (a uniform share of it, at least half) so a recovering Apple is not hit by
    /// every pending receipt at once.
    public func delay(afterAttempt attempt: Int, jitter: Double = Double.random(in: 0...1)) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let raw = base * (1 << exponent)
        let capped = raw > maximum ? maximum : raw
        return capped * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}
