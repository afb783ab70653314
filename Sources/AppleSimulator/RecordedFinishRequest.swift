import Foundation

/// One Finish Transaction call (`POST /inApps/v1/transactions/{transactionId}/finish`, API
/// 1.20) the simulator accepted: the app's server finishing a transaction instead of the
/// device.
/// See https://developer.apple.com/documentation/appstoreserverapi/finish-transaction
public struct RecordedFinishRequest: Sendable, Hashable, Codable {
    /// The transaction finished, as the path named it.
    public var transactionId: String
    /// True when it was already finished (by the device, or by an earlier call): Apple answers
    /// 200 all the same.
    public var wasAlreadyFinished: Bool
    /// The simulated now when the call arrived, milliseconds since 1970 (UTC).
    public var simulatedNowMs: Int64
    /// The wall-clock time the call arrived.
    public var receivedAt: Date
}
