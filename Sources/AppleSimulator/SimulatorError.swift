/// An error from a control operation on the simulator (never from verifyReceipt, which answers
/// with Apple's statuses instead).
public struct SimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong; extensible, so match with `==`.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let unknownProduct = Code(rawValue: "unknown_product")
        public static let unknownTransaction = Code(rawValue: "unknown_transaction")
        public static let unknownSubscription = Code(rawValue: "unknown_subscription")
        public static let unknownAccount = Code(rawValue: "unknown_account")
        public static let environmentMismatch = Code(rawValue: "environment_mismatch")
        public static let alreadyOwned = Code(rawValue: "already_owned")
        public static let alreadySubscribed = Code(rawValue: "already_subscribed")
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// A promotional offer or introductory-offer eligibility the App Store would refuse:
        /// a signature that does not verify, another key, another app or product, too old.
        public static let invalidOffer = Code(rawValue: "invalid_offer")
        /// The server could not take or keep its port (e.g. another socket holds it).
        public static let portUnavailable = Code(rawValue: "port_unavailable")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
