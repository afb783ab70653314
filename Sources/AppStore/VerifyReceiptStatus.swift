/// The `status` of a verifyReceipt body, and what the ledger must do about it.
///
/// https://developer.apple.com/documentation/appstorereceipts/status
public struct VerifyReceiptStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }

    /// The receipt is valid.
    public static let valid = Self(rawValue: 0)
    /// The request to the App Store was not an HTTP POST.
    public static let notPOST = Self(rawValue: 21000)
    /// `receipt-data` was malformed or the service had a problem; Apple advises retrying.
    public static let malformedReceiptData = Self(rawValue: 21002)
    /// The receipt could not be authenticated.
    public static let notAuthenticated = Self(rawValue: 21003)
    /// The shared secret does not match the account's.
    public static let sharedSecretMismatch = Self(rawValue: 21004)
    /// The receipt server was temporarily unable to provide the receipt.
    public static let serverUnavailable = Self(rawValue: 21005)
    /// Valid, but the subscription expired (iOS 6 style receipts; the body is still decoded).
    public static let subscriptionExpired = Self(rawValue: 21006)
    /// A sandbox receipt was sent to production: ask the sandbox.
    public static let sandboxReceiptInProduction = Self(rawValue: 21007)
    /// A production receipt was sent to the sandbox: ask production.
    public static let productionReceiptInSandbox = Self(rawValue: 21008)
    /// Internal data access error; try again later.
    public static let internalDataAccessError = Self(rawValue: 21009)
    /// The user account cannot be found or has been deleted.
    public static let accountNotFound = Self(rawValue: 21010)

    /// Internal data access errors: Apple marks the transient ones with `is-retryable`.
    public var isInternalDataAccessError: Bool { (21100...21199).contains(rawValue) }

    /// What a status means for the caller, before any retry budget is applied.
    public enum Class: Hashable, Sendable {
        /// 0: use the body.
        case valid
        /// 21006: the body is decoded and usable, the subscription has expired.
        case expiredButDecoded
        /// 21007/21008: ask the other environment.
        case wrongEnvironment(ask: VerifyReceiptEndpoint)
        /// 21005, 21009, 21100–21199 with `is-retryable`, 21002 (within its retry budget).
        case retryLater
        /// 21000, 21003, 21010, 21100–21199 without `is-retryable`, unknown statuses.
        case permanent
        /// 21004: our shared secret is wrong; an operator must act.
        case configurationAlarm
    }

    /// Classifies this status. `isRetryable` is the body's `is-retryable` field.
    public func classify(isRetryable: Bool?) -> Class {
        switch self {
        case .valid: return .valid
        case .subscriptionExpired: return .expiredButDecoded
        case .sandboxReceiptInProduction: return .wrongEnvironment(ask: .sandbox)
        case .productionReceiptInSandbox: return .wrongEnvironment(ask: .production)
        case .serverUnavailable, .internalDataAccessError, .malformedReceiptData: return .retryLater
        case .sharedSecretMismatch: return .configurationAlarm
        case _ where isInternalDataAccessError: return isRetryable == true ? .retryLater : .permanent
        default: return .permanent
        }
    }
}

/// Which verifyReceipt endpoint an attempt went to.
public enum VerifyReceiptEndpoint: String, Hashable, Sendable, Codable {
    case production
    case sandbox
}
