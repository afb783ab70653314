import AppStore
import Crypto
import Foundation
import Logging
import Primitives
import Synchronization

/// An Apple stand-in that plays both the device (StoreKit purchases, receipts, finishing) and
/// Apple's servers (verifyReceipt, notifications), on a simulated clock.
///
/// Everything it knows is in memory. All operations are also reachable over HTTP through
/// `AppleSimulatorServer` (the control API), so tests can drive it in-process or remotely.
/// The same server answers the App Store Server API (`/inApps/...`) from this state.
/// Thread-safe: state lives behind one `Mutex`; network I/O happens outside it.
public final class AppleSimulator: Sendable {
    /// The state and the knobs that change with it, guarded together so an answer never mixes
    /// two moments.
    struct Core: Sendable {
        var state: SimulatorState
        var failures: FailurePlan
        var verifyReceiptCalls: [SimulatedEnvironment: Int] = [:]
        var sentNotifications: [OutgoingNotification] = []
        var sinkNotifications: [String] = []
        var notificationURL: String?
        var serverAPIFailures = ServerAPIFailurePlan()
        var serverAPICalls: [ServerAPIEndpoint: Int] = [:]
        var consumptionRequests: [RecordedConsumptionRequest] = []
        var finishRequests: [RecordedFinishRequest] = []
        /// `testNotificationToken` → the TEST notification's `signedPayload`.
        var testNotificationTokens: [String: String] = [:]
    }

    public let configuration: Configuration
    /// The CA signing every JWS; trust its root to verify them.
    public let certificateAuthority: SimulatorCertificateAuthority
    let core: Mutex<Core>
    let receiptKey = SymmetricKey(size: .bits256)
    let logger: Logger
    /// Checks Server API tokens; nil when `configuration.serverAPI` is (every call is then 401).
    let serverAPIVerifier: ServerAPITokenVerifier?
    /// Checks App Store Connect tokens (price points); nil when `configuration.connectPublicKeyPEM` is.
    let connectAPIVerifier: ConnectAPITokenVerifier?

    /// Creates a simulator with an empty store, its clock at `configuration.start`, and a fresh CA.
    public init(configuration: Configuration, logger: Logger = Logger(label: "AppleSimulator")) throws {
        self.configuration = configuration
        self.logger = logger
        let machineNow = Date(timeIntervalSince1970: Double(configuration.machineClock()) / 1000)
        self.certificateAuthority = try SimulatorCertificateAuthority(
            validFrom: min(configuration.start, machineNow), validUntil: max(configuration.start, machineNow))
        self.serverAPIVerifier = try configuration.serverAPI.map { try ServerAPITokenVerifier($0) }
        self.connectAPIVerifier = try configuration.connectPublicKeyPEM.map {
            try ConnectAPITokenVerifier(
                publicKeyPEM: $0, keyId: configuration.connectKeyId, issuerId: configuration.connectIssuerId)
        }
        let startMs = Millis.of(configuration.start)
        self.core = Mutex(
            Core(
                state: SimulatorState(nowMs: startMs, bundleId: configuration.bundleId, products: configuration.products, idOffset: configuration.idOffset),
                failures: FailurePlan(seed: configuration.seed), notificationURL: configuration.notificationURL))
    }

    /// DER of the root certificate: give it to the ledger via `APPLE_ROOT_CERTIFICATES`.
    public var rootCertificateDER: [UInt8] { certificateAuthority.rootCertificateDER }

    /// The simulated now, in milliseconds since 1970 (UTC).
    public var nowMilliseconds: Int64 { core.withLock { $0.state.nowMs } }

    /// The simulated now.
    public var now: Date { Date(timeIntervalSince1970: Double(nowMilliseconds) / 1000) }

    /// The machine's now (`configuration.machineClock`), for what follows real time: token
    /// lifetimes and when a Server API call arrived.
    var machineNow: Date { Date(timeIntervalSince1970: Double(configuration.machineClock()) / 1000) }

    var verifySettings: VerifyReceiptSettings {
        VerifyReceiptSettings(
            sharedSecret: configuration.sharedSecret, receiptKey: receiptKey,
            appAppleId: configuration.appAppleId, seed: configuration.seed)
    }

    var notificationSettings: NotificationSettings {
        NotificationSettings(
            versions: configuration.notificationVersions, sharedSecret: configuration.sharedSecret ?? "",
            appAppleId: configuration.appAppleId, bundleVersion: configuration.bundleVersion,
            verify: verifySettings)
    }

    // MARK: - Reading

    /// A transaction as the simulator knows it now.
    public func transaction(_ transactionId: String) throws -> SimulatedTransaction {
        try core.withLock { try $0.state.transaction(transactionId) }
    }

    /// A subscription's renewal state, by `original_transaction_id`.
    public func subscription(_ originalTransactionId: String) throws -> SimulatedSubscription {
        try core.withLock { try $0.state.subscription(originalTransactionId) }
    }

    /// Every transaction of an Apple ID, oldest first (renewals included, finished ones too).
    public func transactions(of appleId: String) -> [SimulatedTransaction] {
        core.withLock { core in
            core.state.accounts[appleId]?.transactionIds.compactMap { core.state.transactions[$0] } ?? []
        }
    }

    /// The receipt-data (base64) the Apple ID's device holds now.
    public func receiptData(of appleId: String) throws -> String {
        try core.withLock { core in
            guard let account = core.state.accounts[appleId], let number = account.latestReceiptNumber else {
                throw SimulatorError(.unknownAccount, "Apple ID \(appleId) holds no receipt")
            }
            return ReceiptToken(environment: account.environment, receiptNumber: number).encoded(key: receiptKey)
        }
    }

    /// The StoreKit 2 `jwsRepresentation` of a transaction as it stands now, signed at the
    /// simulated now.
    public func signedTransaction(_ transactionId: String) throws -> String {
        let (transaction, now) = try core.withLock { core in
            (try core.state.transaction(transactionId), core.state.nowMs)
        }
        return try certificateAuthority.sign(SignedTransactionPayload(transaction, signedDate: now))
    }

    /// verifyReceipt calls received so far, per endpoint (failed ones included).
    public var verifyReceiptCalls: [SimulatedEnvironment: Int] { core.withLock { $0.verifyReceiptCalls } }

    /// Every notification built so far, oldest first, with how its delivery went.
    public var sentNotifications: [OutgoingNotification] { core.withLock { $0.sentNotifications } }

    /// Bodies posted to the simulator's own notification sink (`POST /control/notification-sink`).
    public var sinkNotifications: [String] { core.withLock { $0.sinkNotifications } }

    /// Where notifications are posted from now on; nil: build and record them only.
    /// (Tests learn the sink's port only after the server starts.)
    public var notificationURL: String? {
        get { core.withLock { $0.notificationURL } }
        set { core.withLock { $0.notificationURL = newValue } }
    }

    func recordSink(_ body: String) {
        core.withLock { $0.sinkNotifications.append(body) }
    }
}
