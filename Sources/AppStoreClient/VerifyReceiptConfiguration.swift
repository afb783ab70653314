import AppStore
import Foundation

/// Settings of a `VerifyReceiptClient`.
///
/// `description` redacts the shared secret, so a configuration can be logged.
public struct VerifyReceiptConfiguration: Sendable, CustomStringConvertible {
    /// Apple's production endpoint.
    public static let defaultProductionURL = "https://buy.itunes.apple.com/verifyReceipt"
    /// Apple's sandbox endpoint.
    public static let defaultSandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"

    /// Asked first; `APPLE_VERIFY_RECEIPT_PRODUCTION_URL`.
    public var productionURL: String
    /// Asked after a 21007; `APPLE_VERIFY_RECEIPT_SANDBOX_URL`.
    public var sandboxURL: String
    /// The app's shared secret (`password`), needed for auto-renewable subscriptions
    /// (`APPLE_SHARED_SECRET`, or the app's in `LEDGER_APPS`). Never logged.
    public var sharedSecret: String?
    /// The longest one attempt may take, connection included.
    public var timeout: Duration
    /// How many times a 21002 answer is asked again before it counts as permanent.
    public var malformedReceiptRetries: Int
    /// The pause before asking again after a 21002.
    public var malformedReceiptRetryDelay: Duration
    /// How many times the client may switch environment on 21007/21008 (guards against a loop).
    public var maximumEnvironmentSwitches: Int
    /// Bodies larger than this are refused (a real answer with years of renewals is < 1 MB).
    public var maximumResponseBytes: Int

    public init(
        productionURL: String = Self.defaultProductionURL,
        sandboxURL: String = Self.defaultSandboxURL,
        sharedSecret: String? = nil,
        timeout: Duration = .seconds(15),
        malformedReceiptRetries: Int = 2,
        malformedReceiptRetryDelay: Duration = .milliseconds(250),
        maximumEnvironmentSwitches: Int = 2,
        maximumResponseBytes: Int = 16 << 20
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sharedSecret = sharedSecret
        self.timeout = timeout
        self.malformedReceiptRetries = malformedReceiptRetries
        self.malformedReceiptRetryDelay = malformedReceiptRetryDelay
        self.maximumEnvironmentSwitches = maximumEnvironmentSwitches
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Reads `APPLE_VERIFY_RECEIPT_PRODUCTION_URL` and `APPLE_VERIFY_RECEIPT_SANDBOX_URL`
    /// (docs/configuration.md; unset or empty variables keep the defaults), with the app's
    /// `sharedSecret`, which the caller read with the app's other settings (`APPLE_SHARED_SECRET`
    /// or `LEDGER_APPS`).
    public init(environment: [String: String], sharedSecret: String?) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        self.init(
            productionURL: value("APPLE_VERIFY_RECEIPT_PRODUCTION_URL") ?? Self.defaultProductionURL,
            sandboxURL: value("APPLE_VERIFY_RECEIPT_SANDBOX_URL") ?? Self.defaultSandboxURL,
            sharedSecret: sharedSecret
        )
    }

    /// The URL of an endpoint.
    public func url(for endpoint: VerifyReceiptEndpoint) -> String {
        endpoint == .production ? productionURL : sandboxURL
    }

    public var description: String {
        "VerifyReceiptConfiguration(production: \(productionURL), sandbox: \(sandboxURL), "
            + "sharedSecret: \(sharedSecret == nil ? "none" : "<redacted>"), timeout: \(timeout))"
    }
}
