import Foundation
import Primitives

/// The payload of one kind of ledger event: a fact in the past tense, with the schema version of
/// its JSON shape so later code can upcast old payloads on read instead of rewriting them.
public protocol LedgerEventPayload: Codable, Sendable, Hashable {
    /// The event type as stored (`events.event_type`).
    static var eventType: String { get }
    /// The version of this payload's JSON shape (`events.schema_version`).
    static var schemaVersion: Int32 { get }
}

extension LedgerEventPayload {
    public static var schemaVersion: Int32 { 1 }

    /// The payload as the log stores it: snake_case keys, sorted.
    public func encoded() throws -> Data { try LedgerJSON.encoder.encode(self) }
}

/// Every event the ledger records, decoded by type. An event type this build does not know
/// is kept as `.unknown`, so replaying a log written by a newer build never fails.
public enum LedgerEvent: Sendable, Hashable {
    case catalogLoaded(CatalogLoaded)
    case orderCreated(OrderCreated)
    case orderFulfilled(OrderFulfilled)
    case receiptSubmitted(ReceiptSubmitted)
    case appleResponded(AppleResponded)
    case verificationPending(VerificationPending)
    case deliveryRejected(DeliveryRejected)
    case submissionResolved(SubmissionResolved)
    case purchaseDelivered(PurchaseDelivered)
    case subscriptionRenewalSeen(SubscriptionRenewalSeen)
    case subscriptionObserved(SubscriptionObserved)
    case ownershipClaimed(OwnershipClaimed)
    case ownershipTransferred(OwnershipTransferred)
    case appleNotificationReceived(AppleNotificationReceived)
    case purchaseRefunded(PurchaseRefunded)
    case appleAccountObserved(AppleAccountObserved)
    case balanceSpent(BalanceSpent)
    case consumptionConsentRecorded(ConsumptionConsentRecorded)
    case reconciliationCompleted(ReconciliationCompleted)
    case consumptionInformationSent(ConsumptionInformationSent)
    case consumptionInformationWithheld(ConsumptionInformationWithheld)
    case appleOrderLookedUp(AppleOrderLookedUp)
    case refundReversed(RefundReversed)
    case transactionHistoryRead(TransactionHistoryRead)
    case appStoreReportImported(AppStoreReportImported)
    case transactionInfoRecorded(TransactionInfoRecorded)
    case pricePointsRefreshed(PricePointsRefreshed)
    case subscriptionRenewalExtended(SubscriptionRenewalExtended)
    case appAccountTokenSet(AppAccountTokenSet)
    case transactionFinished(TransactionFinished)
    case offerSignatureIssued(OfferSignatureIssued)
    case massRenewalExtensionRequested(MassRenewalExtensionRequested)
    case massRenewalExtensionCompleted(MassRenewalExtensionCompleted)
    case purchaseUnclaimed(PurchaseUnclaimed)
    case appsConfigured(AppsConfigured)
    case userErased(UserErased)
    case erasureBegan(ErasureBegan)
    case unknown(type: String)

    /// Decodes a stored payload by its event type.
    public init(type: String, payload: Data) throws {
        try self.init(type: type, bytes: Array(payload))
    }

    /// Decodes a stored payload by its event type: read by `JSONValue.parsedQuickly` and
    /// `PayloadValueDecoding` where they can, else by `LedgerJSON.decoder`, whose value and
    /// errors are the answer either way.
    public init(type: String, bytes: [UInt8]) throws {
        if let value = JSONValue.parsedQuickly(bytes), let event = Self.decodedQuickly(type: type, value: value) {
            self = event
        } else {
            try self.init(type: type, from: DecoderSource(payload: Data(bytes)))
        }
    }

    /// The event whose payload `parsedQuickly` read as `value`, or nil where only
    /// `LedgerJSON.decoder` may say (then ask `init(type:payload:)`).
    public static func decodedQuickly(type: String, value: JSONValue) -> LedgerEvent? {
        try? LedgerEvent(type: type, from: ValueSource(value: value))
    }

    /// The event as `LedgerJSON.decoder` alone reads it: what the quick path is held to.
    public static func decodedByDecoder(type: String, payload: Data) throws -> LedgerEvent {
        try LedgerEvent(type: type, from: DecoderSource(payload: payload))
    }

    private init<Source: PayloadSource>(type: String, from source: Source) throws {
        func decode<P: LedgerEventPayload>(_: P.Type) throws -> P { try source.decode(P.self) }
        switch type {
        case CatalogLoaded.eventType: self = .catalogLoaded(try decode(CatalogLoaded.self))
        case OrderCreated.eventType: self = .orderCreated(try decode(OrderCreated.self))
        case OrderFulfilled.eventType: self = .orderFulfilled(try decode(OrderFulfilled.self))
        case ReceiptSubmitted.eventType: self = .receiptSubmitted(try decode(ReceiptSubmitted.self))
        case AppleResponded.eventType: self = .appleResponded(try decode(AppleResponded.self))
        case VerificationPending.eventType: self = .verificationPending(try decode(VerificationPending.self))
        case DeliveryRejected.eventType: self = .deliveryRejected(try decode(DeliveryRejected.self))
        case SubmissionResolved.eventType: self = .submissionResolved(try decode(SubmissionResolved.self))
        case PurchaseDelivered.eventType: self = .purchaseDelivered(try decode(PurchaseDelivered.self))
        case SubscriptionRenewalSeen.eventType: self = .subscriptionRenewalSeen(try decode(SubscriptionRenewalSeen.self))
        case SubscriptionObserved.eventType: self = .subscriptionObserved(try decode(SubscriptionObserved.self))
        case OwnershipClaimed.eventType: self = .ownershipClaimed(try decode(OwnershipClaimed.self))
        case OwnershipTransferred.eventType: self = .ownershipTransferred(try decode(OwnershipTransferred.self))
        case AppleNotificationReceived.eventType: self = .appleNotificationReceived(try decode(AppleNotificationReceived.self))
        case PurchaseRefunded.eventType: self = .purchaseRefunded(try decode(PurchaseRefunded.self))
        case AppleAccountObserved.eventType: self = .appleAccountObserved(try decode(AppleAccountObserved.self))
        case BalanceSpent.eventType: self = .balanceSpent(try decode(BalanceSpent.self))
        case ConsumptionConsentRecorded.eventType: self = .consumptionConsentRecorded(try decode(ConsumptionConsentRecorded.self))
        case ReconciliationCompleted.eventType: self = .reconciliationCompleted(try decode(ReconciliationCompleted.self))
        case ConsumptionInformationSent.eventType: self = .consumptionInformationSent(try decode(ConsumptionInformationSent.self))
        case ConsumptionInformationWithheld.eventType: self = .consumptionInformationWithheld(try decode(ConsumptionInformationWithheld.self))
        case AppleOrderLookedUp.eventType: self = .appleOrderLookedUp(try decode(AppleOrderLookedUp.self))
        case RefundReversed.eventType: self = .refundReversed(try decode(RefundReversed.self))
        case TransactionHistoryRead.eventType: self = .transactionHistoryRead(try decode(TransactionHistoryRead.self))
        case AppStoreReportImported.eventType: self = .appStoreReportImported(try decode(AppStoreReportImported.self))
        case TransactionInfoRecorded.eventType: self = .transactionInfoRecorded(try decode(TransactionInfoRecorded.self))
        case PricePointsRefreshed.eventType: self = .pricePointsRefreshed(try decode(PricePointsRefreshed.self))
        case SubscriptionRenewalExtended.eventType: self = .subscriptionRenewalExtended(try decode(SubscriptionRenewalExtended.self))
        case AppAccountTokenSet.eventType: self = .appAccountTokenSet(try decode(AppAccountTokenSet.self))
        case TransactionFinished.eventType: self = .transactionFinished(try decode(TransactionFinished.self))
        case OfferSignatureIssued.eventType: self = .offerSignatureIssued(try decode(OfferSignatureIssued.self))
        case MassRenewalExtensionRequested.eventType: self = .massRenewalExtensionRequested(try decode(MassRenewalExtensionRequested.self))
        case MassRenewalExtensionCompleted.eventType: self = .massRenewalExtensionCompleted(try decode(MassRenewalExtensionCompleted.self))
        case PurchaseUnclaimed.eventType: self = .purchaseUnclaimed(try decode(PurchaseUnclaimed.self))
        case AppsConfigured.eventType: self = .appsConfigured(try decode(AppsConfigured.self))
        case UserErased.eventType: self = .userErased(try decode(UserErased.self))
        case ErasureBegan.eventType: self = .erasureBegan(try decode(ErasureBegan.self))
        default: self = .unknown(type: type)
        }
    }

    /// The payload, for encoding; nil for `.unknown`.
    public var payload: (any LedgerEventPayload)? {
        switch self {
        case .catalogLoaded(let p): p
        case .orderCreated(let p): p
        case .orderFulfilled(let p): p
        case .receiptSubmitted(let p): p
        case .appleResponded(let p): p
        case .verificationPending(let p): p
        case .deliveryRejected(let p): p
        case .submissionResolved(let p): p
        case .purchaseDelivered(let p): p
        case .subscriptionRenewalSeen(let p): p
        case .subscriptionObserved(let p): p
        case .ownershipClaimed(let p): p
        case .ownershipTransferred(let p): p
        case .appleNotificationReceived(let p): p
        case .purchaseRefunded(let p): p
        case .appleAccountObserved(let p): p
        case .balanceSpent(let p): p
        case .consumptionConsentRecorded(let p): p
        case .reconciliationCompleted(let p): p
        case .consumptionInformationSent(let p): p
        case .consumptionInformationWithheld(let p): p
        case .appleOrderLookedUp(let p): p
        case .refundReversed(let p): p
        case .transactionHistoryRead(let p): p
        case .appStoreReportImported(let p): p
        case .transactionInfoRecorded(let p): p
        case .pricePointsRefreshed(let p): p
        case .subscriptionRenewalExtended(let p): p
        case .appAccountTokenSet(let p): p
        case .transactionFinished(let p): p
        case .offerSignatureIssued(let p): p
        case .massRenewalExtensionRequested(let p): p
        case .massRenewalExtensionCompleted(let p): p
        case .purchaseUnclaimed(let p): p
        case .appsConfigured(let p): p
        case .userErased(let p): p
        case .erasureBegan(let p): p
        case .unknown: nil
        }
    }

    /// The stored event type.
    public var type: String {
        if case .unknown(let type) = self { return type }
        return Swift.type(of: payload!).eventType
    }
}

/// Where `LedgerEvent`'s decoding by type takes a payload from.
private protocol PayloadSource {
    func decode<P: LedgerEventPayload>(_ type: P.Type) throws -> P
}

private struct DecoderSource: PayloadSource {
    let payload: Data
    func decode<P: LedgerEventPayload>(_ type: P.Type) throws -> P { try LedgerJSON.decoder.decode(P.self, from: payload) }
}

private struct ValueSource: PayloadSource {
    let value: JSONValue
    func decode<P: LedgerEventPayload>(_ type: P.Type) throws -> P { try PayloadValueDecoding.decode(P.self, from: value) }
}
