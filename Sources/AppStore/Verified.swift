import Foundation

/// A signed payload whose signature, certificate chain, bundle and environment were checked.
public struct Verified<Payload: Sendable>: Sendable {
    /// The decoded payload.
    public var payload: Payload
    /// The payload JSON exactly as signed, so fields this module does not model are not lost.
    public var payloadBytes: Data
    /// The instant the certificate chain was validated at (the `signedDate`, or now).
    public var validationTime: Date
}

extension Verified: Equatable where Payload: Equatable {}

/// A verified v2 notification with its nested signed data, each verified on its own.
public struct VerifiedNotification: Sendable {
    public var notification: Verified<NotificationV2Payload>
    /// `data.signedTransactionInfo`, verified and decoded; nil when the notification has none.
    public var transaction: Verified<SignedTransaction>?
    /// `data.signedRenewalInfo`, verified and decoded; nil when the notification has none.
    public var renewalInfo: Verified<SignedRenewalInfo>?

    /// The decoded notification payload.
    public var payload: NotificationV2Payload { notification.payload }
}
