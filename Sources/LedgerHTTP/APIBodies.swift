import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import NIOCore
import Primitives

/// Request bodies of docs/http-api.md, decoded strictly: a missing field, a wrong type or a value
/// out of range is a 400 `invalid_request` naming the field, never a 5xx.
enum APIBodies {
    struct CreateOrder: Decodable {
        var userId: String
        var productId: String
        var quantity: Int64?
        var bundleId: String?
    }

    struct Spend: Decodable {
        var unit: String
        var amount: Int64
        var spendId: String
        var reason: String?
        var bundleId: String?
    }

    struct Consent: Decodable {
        var consumptionData: Bool
        var bundleId: String?
    }

    /// `DELETE /v1/users/{user_id}`'s body.
    struct Erase: Decodable {
        var reason: String
        var requestId: String
    }

    struct OfferSignature: Decodable {
        var userId: String
        var productId: String
        var kind: String
        var offerId: String?
        var transactionId: String?
        var allowIntroductoryOffer: Bool?
        var bundleId: String?
    }

    struct AppAccountToken: Decodable {
        var appAccountToken: String
        var reason: String?
    }

    struct Extend: Decodable {
        var days: Int64
        var reason: String
        var requestId: String
        var note: String?
    }

    struct Restore: Decodable {
        var signedTransaction: String?
        var transactionId: String?
    }

    struct SubmitReceipt: Decodable {
        var userId: String
        var receiptData: String
        var transactionId: String?
        var orderId: String?
    }

    struct SubmitTransaction: Decodable {
        var userId: String
        var signedTransaction: String
        var orderId: String?
    }

    /// Reads the body (at most 1 MB: 413 beyond) and decodes it.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let buffer = try await request.body.collect(upTo: APILimits.maximumBodyBytes)
        let data = Data(buffer: buffer)
        do {
            return try LedgerJSON.decoder.decode(T.self, from: data)
        } catch {
            throw APIError.invalidRequest("the body is not valid: \(LedgerJSON.describe(error))")
        }
    }

    /// An id the ledger keeps (user, order, transaction): 1–200 printable characters.
    /// An id from a path segment: routes match the raw path, so a client that percent-encodes
    /// the id (`bob%40example.com`, `a%2Fb`) is decoded here before it is looked up.
    static func pathIdentifier(_ segment: String, _ field: String) throws -> String {
        guard let decoded = segment.removingPercentEncoding else {
            throw APIError.invalidRequest("\(field) has a malformed percent-encoding")
        }
        return try identifier(decoded, field)
    }

    /// Checks `signed_transaction` is StoreKit's `jwsRepresentation` in shape (three base64url
    /// parts joined by dots); its signature is verified later.
    static func requireCompactJWS(_ jws: String) throws {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=" } }) else {
            throw APIError.invalidRequest("signed_transaction must be StoreKit's jwsRepresentation: three base64url parts joined by dots")
        }
    }

    static func identifier(_ value: String, _ field: String) throws -> String {
        guard (1...200).contains(value.count), value.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value != 0x7F }) else {
            throw APIError.invalidRequest("\(field) must be 1 to 200 printable characters without spaces")
        }
        return value
    }
}

/// Answers of docs/http-api.md with every field present (null when unknown), as documented.
enum APIAnswers {
    /// `GET /v1/events` with an `after`/`after_hash` the log no longer holds (409): the error,
    /// and the head to resume from.
    struct HistoryDivergedBody: Encodable {
        struct Head: Encodable {
            var position: Int64
            var hash: String
        }
        var error: ErrorBody.Detail
        var head: Head

        init(_ diverged: HistoryDiverged) {
            let what = diverged.truncated
                ? "the log ends at position \(diverged.head), before \(diverged.position)"
                : "the event at position \(diverged.position) has another hash"
            error = .init(
                code: "history_diverged",
                message: "\(what): the ledger was restored to an earlier point; resume after the head")
            head = Head(position: diverged.head, hash: Hex.encode(diverged.headHash))
        }
    }

    /// `POST /v1/offers/signatures` (201).
    struct OfferSignature: Encodable {
        var signature: String
        var keyId: String
        var nonce: String
        /// Milliseconds since 1970, as StoreKit takes it.
        var timestamp: Int64
        @WrittenNull var appAccountToken: String?
        @WrittenNull var expiresAt: String?
    }

    /// `PUT /v1/transactions/{id}/app-account-token`.
    struct AppAccountTokenSet: Encodable {
        var originalTransactionId: String
        var appAccountToken: String
        var ownerUserId: String
    }

    /// `POST /v1/subscriptions/{id}/extend`.
    struct Extended: Encodable {
        var originalTransactionId: String
        @WrittenNull var effectiveDate: String?
        @WrittenNull var newExpiresAt: String?
    }

    struct Order: Encodable {
        var order: OrderCreated
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(order.orderId, forKey: .orderId)
            try c.encode(order.userId, forKey: .userId)
            try c.encode(order.productId, forKey: .productId)
            try c.encode(order.quantity, forKey: .quantity)
            try c.encode(order.appAccountToken, forKey: .appAccountToken)
            try c.encode(RevenueDay.iso8601(order.createdAtMs), forKey: .createdAt)
            try c.encode(order.bundleId, forKey: .bundleId)
        }
        enum Keys: String, CodingKey { case orderId, userId, productId, quantity, appAccountToken, createdAt, bundleId }
    }

    /// `GET /v1/apple-orders/{order_id}`'s answer.
    struct AppleOrder: Encodable {
        var view: AppleOrderView
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(view.orderId, forKey: .orderId)
            try c.encode(view.environment, forKey: .environment)
            try c.encode(view.transactions.map(Transaction.init), forKey: .transactions)
        }
        enum Keys: String, CodingKey { case orderId, environment, transactions }

        struct Transaction: Encodable {
            var transactionId: String
            var originalTransactionId: String
            var productId: String
            @WrittenNull var userId: String?
            @WrittenNull var bundleId: String?
            init(_ t: AppleOrderView.Transaction) {
                transactionId = t.transactionId
                originalTransactionId = t.originalTransactionId
                productId = t.productId
                userId = t.userId
                bundleId = t.bundleId
            }
        }
    }

    /// `POST /v1/users/{user_id}/spend`'s answer.
    struct Spent: Encodable {
        var userId: String
        var unit: String
        var amount: Int64
        var balance: Int64
        var spendId: String

        init(_ spent: BalanceSpent) {
            userId = spent.userId
            unit = spent.unit
            amount = spent.amount
            balance = spent.balanceAfter
            spendId = spent.spendId
        }
    }

    /// `POST /v1/users/{user_id}/consent`'s answer.
    /// `DELETE /v1/users/{user_id}`'s answer.
    struct Erased: Encodable {
        var subject: String
        var erasedAt: String
        init(_ erased: UserErased) {
            subject = erased.subject
            erasedAt = RevenueDay.iso8601(erased.erasedAtMs)
        }
    }

    struct Consent: Encodable {
        var consent: ConsumptionConsentRecorded
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(consent.userId, forKey: .userId)
            try c.encode(consent.consumptionData, forKey: .consumptionData)
            try c.encode(RevenueDay.iso8601(consent.recordedAtMs), forKey: .recordedAt)
        }
        enum Keys: String, CodingKey { case userId, consumptionData, recordedAt }
    }

    struct DeliveryJSON: Encodable {
        var delivery: Delivery
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(delivery.transactionId, forKey: .transactionId)
            try c.encode(delivery.originalTransactionId, forKey: .originalTransactionId)
            try c.encode(delivery.productId, forKey: .productId)
            try c.encode(delivery.orderId, forKey: .orderId)
            try c.encode(delivery.userId, forKey: .userId)
            try c.encode(delivery.quantity, forKey: .quantity)
            try c.encode(delivery.environment, forKey: .environment)
        }
        enum Keys: String, CodingKey { case transactionId, originalTransactionId, productId, orderId, userId, quantity, environment }
    }

    struct Outcome: Encodable {
        var outcome: String
        var deliveries: [DeliveryJSON]?
        var retryAfterSeconds: Int?
        var error: ErrorDetail?
    }

    struct ErrorDetail: Encodable {
        var code: String
        var message: String
    }

    static func response(for outcome: SubmissionOutcome) throws -> Response {
        switch outcome {
        case .delivered(let deliveries):
            return try JSONResponse.make(Outcome(outcome: outcome.label, deliveries: deliveries.map(DeliveryJSON.init)))
        case .alreadyDelivered(let deliveries):
            return try JSONResponse.make(Outcome(outcome: outcome.label, deliveries: deliveries.map(DeliveryJSON.init)))
        case .pending(let seconds):
            var response = try JSONResponse.make(Outcome(outcome: outcome.label, retryAfterSeconds: seconds), status: .accepted)
            response.headers[.retryAfter] = String(seconds)
            return response
        case .rejected(let code, let message):
            return try JSONResponse.make(
                Outcome(outcome: outcome.label, error: ErrorDetail(code: code.rawValue, message: message)), status: .unprocessableContent)
        }
    }

    /// `balances` and `entitlements` are the app in scope's (`scope`; none: empty), `apps`
    /// every app's the user holds anything in (docs/http-api.md).
    struct User: Encodable {
        var view: UserView
        var scope: String?
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(view.userId, forKey: .userId)
            try c.encode(scope.map { view.balances(in: $0) } ?? [:], forKey: .balances)
            try c.encode((scope.map { view.entitlements(in: $0) } ?? []).map(EntitlementJSON.init), forKey: .entitlements)
            try c.encode(view.bundleIds.map { UserApp(bundleId: $0, view: view) }, forKey: .apps)
            try c.encode(view.appleAccounts, forKey: .appleAccounts)
        }
        enum Keys: String, CodingKey { case userId, balances, entitlements, apps, appleAccounts }
    }

    struct UserApp: Encodable {
        var bundleId: String
        var view: UserView
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(bundleId, forKey: .bundleId)
            try c.encode(view.balances(in: bundleId), forKey: .balances)
            try c.encode(view.entitlements(in: bundleId).map(EntitlementJSON.init), forKey: .entitlements)
        }
        enum Keys: String, CodingKey { case bundleId, balances, entitlements }
    }

    struct EntitlementJSON: Encodable {
        var entitlement: UserView.Entitlement
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(entitlement.productId, forKey: .productId)
            try c.encode(entitlement.originalTransactionId, forKey: .originalTransactionId)
            try c.encode(entitlement.kind, forKey: .kind)
            try c.encode(entitlement.active, forKey: .active)
            try c.encode(entitlement.expiresAt, forKey: .expiresAt)
            try c.encode(entitlement.bundleId, forKey: .bundleId)
        }
        enum Keys: String, CodingKey { case productId, originalTransactionId, kind, active, expiresAt, bundleId }
    }

    struct Subscription: Encodable {
        var view: SubscriptionView
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(view.originalTransactionId, forKey: .originalTransactionId)
            try c.encode(view.productId, forKey: .productId)
            try c.encode(view.ownerUserId, forKey: .ownerUserId)
            try c.encode(view.status, forKey: .status)
            try c.encode(view.expiresAt, forKey: .expiresAt)
            try c.encode(view.autoRenew, forKey: .autoRenew)
            try c.encode(view.inTrial, forKey: .inTrial)
            try c.encode(view.environment, forKey: .environment)
            try c.encode(view.bundleId, forKey: .bundleId)
        }
        enum Keys: String, CodingKey { case originalTransactionId, productId, ownerUserId, status, expiresAt, autoRenew, inTrial, environment, bundleId }
    }

    struct Ownership: Encodable {
        var view: OwnershipView
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(view.originalTransactionId, forKey: .originalTransactionId)
            try c.encode(view.bundleId, forKey: .bundleId)
            try c.encode(view.productId, forKey: .productId)
            try c.encode(view.ownerUserId, forKey: .ownerUserId)
            try c.encode(view.appleAccount, forKey: .appleAccount)
            try c.encode(view.history.map(OwnershipChangeJSON.init), forKey: .history)
        }
        enum Keys: String, CodingKey { case originalTransactionId, bundleId, productId, ownerUserId, appleAccount, history }
    }

    struct OwnershipChangeJSON: Encodable {
        var change: OwnershipView.Change
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(change.position, forKey: .position)
            try c.encode(change.recordedAt, forKey: .recordedAt)
            try c.encode(change.userId, forKey: .userId)
            try c.encode(change.reason, forKey: .reason)
        }
        enum Keys: String, CodingKey { case position, recordedAt, userId, reason }
    }

    struct AppleAccount: Encodable {
        var view: AppleAccountView
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(view.appleAccount, forKey: .appleAccount)
            try c.encode(view.users, forKey: .users)
            try c.encode(view.originalTransactionIds, forKey: .originalTransactionIds)
        }
        enum Keys: String, CodingKey { case appleAccount, users, originalTransactionIds }
    }
}

/// JSON responses in the ledger's conventions (snake_case, sorted keys).
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        bytes(try LedgerJSON.encoder.encode(value), status: status)
    }

    /// A body already written as JSON.
    static func bytes(_ json: some Sequence<UInt8>, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}
