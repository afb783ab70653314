/// Which of Apple's two worlds a simulated Apple ID, receipt or transaction lives in.
///
/// The raw values are the strings Apple puts in verifyReceipt's `environment` and in the JWS
/// `environment` field.
public enum SimulatedEnvironment: String, Sendable, Codable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"

    /// The path segment of the simulator's verifyReceipt endpoint for this environment:
    /// `/production/verifyReceipt` or `/sandbox/verifyReceipt`.
    public var pathSegment: String {
        switch self {
        case .production: "production"
        case .sandbox: "sandbox"
        }
    }

    /// The spelling of v1 notifications, which say `PROD` where verifyReceipt says `Production`.
    var notificationV1Name: String {
        switch self {
        case .production: "PROD"
        case .sandbox: "Sandbox"
        }
    }
}
