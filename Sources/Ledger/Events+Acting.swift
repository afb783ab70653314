/// Acts (docs/architecture.md §11): what support or the app's backend asked Apple to do, recorded with
/// its reason, idempotency key and Apple's request and answer verbatim (documents), so every
/// goodwill day can be traced to who did it (the event's metadata names the actor) and why.

/// Why a renewal date was extended: Apple's `extendReasonCode` 1…3 (0, undeclared, is never sent).
public enum ExtensionReason: String, Sendable, Hashable, Codable, CaseIterable {
    case customerSatisfaction = "customer_satisfaction"
    case other
    case serviceIssue = "service_issue"

    public var appleCode: Int {
        switch self {
        case .customerSatisfaction: 1
        case .other: 2
        case .serviceIssue: 3
        }
    }
}

/// Support asked Apple to extend one subscription's renewal date (Extend a Subscription Renewal
/// Date), and what Apple answered: extended to `effectiveDateMs`, or refused with its code.
/// Appended to `Streams.renewalExtension(requestId)` expecting no stream and keyed by the
/// request id, so a retry never extends twice.
public struct SubscriptionRenewalExtended: LedgerEventPayload {
    public static let eventType = "SubscriptionRenewalExtended"
    public var originalTransactionId: String
    public var productId: String
    public var environment: String
    /// The subscription's latest period when asked: the one whose end moves.
    public var transactionId: String
    public var days: Int64
    public var reason: ExtensionReason
    /// Support's words on why (the console requires them; the API takes them optionally).
    public var note: String?
    /// The ledger's and Apple's idempotency key (`requestIdentifier`).
    public var requestId: String
    /// `extended` or `refused`.
    public var outcome: String
    /// The new renewal date Apple answered (milliseconds since 1970, UTC); nil when refused.
    public var effectiveDateMs: Int64?
    /// Apple's refusal: its `errorCode` and message (HTTP 403 or 400).
    public var appleErrorCode: Int64?
    public var appleErrorMessage: String?
    /// sha256 (hex) of the request the ledger sent and of Apple's answer.
    public var requestDocumentSha256: String
    public var answerDocumentSha256: String
    public var atMs: Int64

    public init(
        originalTransactionId: String, productId: String, environment: String, transactionId: String, days: Int64, reason: ExtensionReason,
        requestId: String, outcome: String, effectiveDateMs: Int64?, appleErrorCode: Int64?, appleErrorMessage: String?,
        requestDocumentSha256: String, answerDocumentSha256: String, atMs: Int64, note: String? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.environment = environment
        self.transactionId = transactionId
        self.days = days
        self.reason = reason
        self.note = note
        self.requestId = requestId
        self.outcome = outcome
        self.effectiveDateMs = effectiveDateMs
        self.appleErrorCode = appleErrorCode
        self.appleErrorMessage = appleErrorMessage
        self.requestDocumentSha256 = requestDocumentSha256
        self.answerDocumentSha256 = answerDocumentSha256
        self.atMs = atMs
    }

    public var extended: Bool { outcome == "extended" }
}

/// Support or the app's backend attached a user's app account token (a UUID the ledger issued
/// with one of their orders) to a purchase made before the app knew its user (Apple's Set App
/// Account Token), and what came of it: `set` (Apple accepted; the purchase is the token's
/// user's from then on, an `OwnershipTransferred` beside it when it was someone else's) or
/// `refused` (another user holds it under `LEDGER_TRANSFER_POLICY=keep`, Apple not asked; or
/// Apple's refusal and its code). Appended to `Streams.appAccountToken(originalTransactionId)`.
public struct AppAccountTokenSet: LedgerEventPayload {
    public static let eventType = "AppAccountTokenSet"
    public var originalTransactionId: String
    public var productId: String
    public var environment: String
    /// Lower-case UUID.
    public var appAccountToken: String
    /// The user the token was issued to (by `OrderCreated`).
    public var userId: String
    /// Who held the purchase when asked (nil: no one).
    public var previousUserId: String?
    /// `set` or `refused`.
    public var outcome: String
    /// Why it was refused: `owned_by_another_user`, or Apple's `errorCode` as text.
    public var refusal: String?
    public var reason: String?
    /// sha256 (hex) of the request sent and Apple's answer; nil when Apple was not asked.
    public var requestDocumentSha256: String?
    public var answerDocumentSha256: String?
    public var atMs: Int64

    public init(
        originalTransactionId: String, productId: String, environment: String, appAccountToken: String, userId: String, previousUserId: String?,
        outcome: String, refusal: String?, reason: String?, requestDocumentSha256: String?, answerDocumentSha256: String?, atMs: Int64
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.environment = environment
        self.appAccountToken = appAccountToken
        self.userId = userId
        self.previousUserId = previousUserId
        self.outcome = outcome
        self.refusal = refusal
        self.reason = reason
        self.requestDocumentSha256 = requestDocumentSha256
        self.answerDocumentSha256 = answerDocumentSha256
        self.atMs = atMs
    }
}

/// The ledger finished a delivered transaction with Apple (Finish Transaction, API 1.20), so a
/// client that crashed before `finish()` leaves nothing open (`LEDGER_FINISH_TRANSACTIONS=1`).
/// Appended to `Streams.transactionFinished(transactionId)` expecting no stream: once.
/// `outcome` is `finished`, or `refused` with Apple's code (a 4xx, which asking again would not
/// change).
public struct TransactionFinished: LedgerEventPayload {
    public static let eventType = "TransactionFinished"
    public var transactionId: String
    public var environment: String
    public var outcome: String
    public var appleErrorCode: Int64?
    /// sha256 (hex) of Apple's answer (empty for its 200 without a body, which is kept too).
    public var answerDocumentSha256: String
    public var atMs: Int64

    public init(transactionId: String, environment: String, outcome: String, appleErrorCode: Int64?, answerDocumentSha256: String, atMs: Int64) {
        self.transactionId = transactionId
        self.environment = environment
        self.outcome = outcome
        self.appleErrorCode = appleErrorCode
        self.answerDocumentSha256 = answerDocumentSha256
        self.atMs = atMs
    }
}

/// The kinds of offer signature the app's server makes for StoreKit (`POST /v1/offers/signatures`).
public enum OfferSignatureKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// StoreKit 2's `PromotionalOfferV2` JWS.
    case promotional
    /// The legacy ECDSA signature (SKPaymentDiscount / `.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`).
    case promotionalLegacy = "promotional_legacy"
    /// The introductory-offer eligibility JWS.
    case introductoryEligibility = "introductory_eligibility"
}

/// The ledger signed an offer in Apple's name for a user (with the In-App Purchase key, the
/// Server API's `.p8`): who was offered what, with which nonce, until when. Never the key; the
/// signature itself only by its sha256. A purchase that redeems the offer (Apple's
/// `offerIdentifier` on its transaction) links to the signatures of that user, product and
/// offer in its timeline. Appended to `Streams.offerSignature(signatureId)`.
public struct OfferSignatureIssued: LedgerEventPayload {
    public static let eventType = "OfferSignatureIssued"
    public var signatureId: String
    public var kind: OfferSignatureKind
    public var userId: String
    public var productId: String
    public var offerId: String?
    public var transactionId: String?
    public var allowIntroductoryOffer: Bool?
    /// Lower-case UUID.
    public var nonce: String
    /// Milliseconds since 1970, UTC: the signature's timestamp (`iat` for the JWS kinds).
    public var timestampMs: Int64
    public var keyId: String
    /// The user's latest order's token, signed into the legacy kind.
    public var appAccountToken: String?
    /// When StoreKit stops accepting it (the legacy kind: 24 hours); nil for the JWS kinds.
    public var expiresAtMs: Int64?
    public var signatureSha256: String
    /// The app the offer is for (a JWS signature names it, `bid`); nil when issued before
    /// events named their app.
    public var bundleId: String?

    public init(
        signatureId: String, kind: OfferSignatureKind, userId: String, productId: String, offerId: String?, transactionId: String?,
        allowIntroductoryOffer: Bool?, nonce: String, timestampMs: Int64, keyId: String, appAccountToken: String?, expiresAtMs: Int64?,
        signatureSha256: String, bundleId: String? = nil
    ) {
        self.signatureId = signatureId
        self.kind = kind
        self.userId = userId
        self.productId = productId
        self.offerId = offerId
        self.transactionId = transactionId
        self.allowIntroductoryOffer = allowIntroductoryOffer
        self.nonce = nonce
        self.timestampMs = timestampMs
        self.keyId = keyId
        self.appAccountToken = appAccountToken
        self.expiresAtMs = expiresAtMs
        self.signatureSha256 = signatureSha256
        self.bundleId = bundleId
    }
}

/// Support asked Apple to extend the renewal date of every active subscriber of a product
/// (mass extension): Apple's request id, and its answer kept. Apple extends each subscription
/// over time and tells each by a `RENEWAL_EXTENDED` notification (a failure by
/// `RENEWAL_EXTENSION`/`FAILURE`), which the ledger records as it records every notification.
/// First event of `Streams.massRenewalExtension(requestId)`, recorded before Apple is asked
/// (then `answerDocumentSha256` is nil, and Apple's answer is in the completion), so a request
/// cut off after Apple took it is found and followed again, never made twice.
public struct MassRenewalExtensionRequested: LedgerEventPayload {
    public static let eventType = "MassRenewalExtensionRequested"
    public var requestId: String
    public var productId: String
    public var environment: String
    public var days: Int64
    public var reason: ExtensionReason
    public var note: String?
    /// ISO 3166-1 alpha-3; nil: every storefront.
    public var storefronts: [String]?
    public var requestDocumentSha256: String
    /// Apple's answer to the request; nil when recorded before asking.
    public var answerDocumentSha256: String?
    public var atMs: Int64
    /// The app whose subscribers it extends (a product id is one app's); nil when requested
    /// before events named their app.
    public var bundleId: String?

    public init(
        requestId: String, productId: String, environment: String, days: Int64, reason: ExtensionReason, note: String?, storefronts: [String]?,
        requestDocumentSha256: String, answerDocumentSha256: String?, atMs: Int64, bundleId: String? = nil
    ) {
        self.requestId = requestId
        self.productId = productId
        self.environment = environment
        self.days = days
        self.reason = reason
        self.note = note
        self.storefronts = storefronts
        self.requestDocumentSha256 = requestDocumentSha256
        self.answerDocumentSha256 = answerDocumentSha256
        self.atMs = atMs
        self.bundleId = bundleId
    }
}

/// Apple said a mass extension is complete: how many subscriptions it extended and how many it
/// could not; or Apple refused the request itself (`appleErrorCode`, counts 0, no status).
/// Second event of `Streams.massRenewalExtension(requestId)`.
public struct MassRenewalExtensionCompleted: LedgerEventPayload {
    public static let eventType = "MassRenewalExtensionCompleted"
    public var requestId: String
    public var productId: String
    /// The request's environment; absent from completions recorded before it was kept.
    public var environment: String?
    public var succeededCount: Int64
    public var failedCount: Int64
    public var completeDateMs: Int64?
    /// sha256 (hex) of Apple's status answer that said complete; empty when Apple refused.
    public var statusDocumentSha256: String
    /// Apple's answer to the request itself, when the request event was recorded before asking.
    public var answerDocumentSha256: String?
    /// Apple refused the request: its error code and message.
    public var appleErrorCode: Int64?
    public var appleErrorMessage: String?
    public var atMs: Int64

    public init(
        requestId: String, productId: String, environment: String?, succeededCount: Int64, failedCount: Int64, completeDateMs: Int64?,
        statusDocumentSha256: String, answerDocumentSha256: String? = nil, appleErrorCode: Int64? = nil, appleErrorMessage: String? = nil, atMs: Int64
    ) {
        self.requestId = requestId
        self.productId = productId
        self.environment = environment
        self.succeededCount = succeededCount
        self.failedCount = failedCount
        self.completeDateMs = completeDateMs
        self.statusDocumentSha256 = statusDocumentSha256
        self.answerDocumentSha256 = answerDocumentSha256
        self.appleErrorCode = appleErrorCode
        self.appleErrorMessage = appleErrorMessage
        self.atMs = atMs
    }

    public var refused: Bool { appleErrorCode != nil }
}
