import Foundation

/// Bodies of the control API (`/control/...`), JSON with snake_case keys.
enum ControlAPI {
    struct PurchaseRequest: Decodable {
        var appleId: String
        var productId: String
        /// "Sandbox" / "Production" (any case); default sandbox.
        var environment: String?
        var quantity: Int?
        var appAccountToken: UUID?
        var bundleId: String?
        /// ISO 3166-1 alpha-3 (`DEU`); default the Apple ID's storefront (`USA` for a new one).
        var storefront: String?
        /// A promotional offer signed the original way: `{"offer_identifier","key_identifier",
        /// "nonce","timestamp","signature"}` (see `PromotionalOfferSignature`).
        var promotionalOffer: PromotionalOfferSignature?
        /// A promotional offer signed as a compact JWS.
        var promotionalOfferJws: String?
        /// An introductory-offer eligibility, a compact JWS.
        var introductoryOfferEligibilityJws: String?

        /// The offer redeemed with the purchase: at most one of the three.
        func offer() throws -> OfferRedemption? {
            let given: [OfferRedemption] = [
                promotionalOffer.map(OfferRedemption.promotionalOffer),
                promotionalOfferJws.map(OfferRedemption.promotionalOfferJWS),
                introductoryOfferEligibilityJws.map(OfferRedemption.introductoryOfferEligibilityJWS),
            ].compactMap { $0 }
            guard given.count <= 1 else {
                throw SimulatorError(
                    .invalidRequest,
                    "give at most one of promotional_offer, promotional_offer_jws, introductory_offer_eligibility_jws")
            }
            return given.first
        }
    }

    /// The transaction as `GET /control/transactions/{id}` shows it, plus what the device
    /// holds: `receipt_data` (for `/v1/receipts`) and `signed_transaction` (for `/v1/transactions`).
    struct PurchaseResponse: Encodable {
        var result: PurchaseResult

        init(_ result: PurchaseResult) {
            self.result = result
        }

        private enum Keys: String, CodingKey {
            case receiptData, signedTransaction
        }

        func encode(to encoder: any Encoder) throws {
            try result.transaction.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(result.receiptData, forKey: .receiptData)
            try container.encode(result.signedTransaction, forKey: .signedTransaction)
        }
    }

    struct RefundRequest: Decodable {
        /// 0 other, 1 an issue in the app; default 0.
        var reason: Int?
        /// The share refunded, in thousandths of a percent (25000 is 25 %); nil: all of it.
        var revocationPercentage: Int64?
    }

    struct ConsumptionRequest: Decodable {
        /// Apple's `consumptionRequestReason`, e.g. "UNINTENDED_PURCHASE" (the default).
        var reason: String?
    }

    struct AutoRenewRequest: Decodable {
        var enabled: Bool
    }

    struct ChangeProductRequest: Decodable {
        var productId: String
    }

    struct BillingRequest: Decodable {
        var fails: Bool
    }

    struct AdvanceRequest: Decodable {
        var days: Int?
        var seconds: Int64?
    }

    struct Clock: Encodable {
        var nowMs: Int64
    }

    /// One failure rule, flattened: exactly one of `status`, `http_status`, `delay_ms`,
    /// `malformed`; at most one of `next` (default 1) and `fraction`.
    struct FailureRequest: Decodable {
        var status: Int?
        var httpStatus: Int?
        var delayMs: Int?
        var malformed: Bool?
        var next: Int?
        var fraction: Double?
        /// "production" or "sandbox"; absent: both.
        var endpoint: String?

        func rule() throws -> FailureRule {
            let modes: [FailureMode?] = [
                status.map(FailureMode.status), httpStatus.map(FailureMode.httpStatus),
                delayMs.map { FailureMode.delay(milliseconds: $0) }, malformed == true ? .malformedBody : nil,
            ]
            let given = modes.compactMap { $0 }
            guard given.count == 1, let mode = given.first else {
                throw SimulatorError(.invalidRequest, "give exactly one of status, http_status, delay_ms, malformed")
            }
            guard next == nil || fraction == nil else {
                throw SimulatorError(.invalidRequest, "give next or fraction, not both")
            }
            let scope: FailureRule.Scope = fraction.map { .fraction($0) } ?? .next(next ?? 1)
            let only = try endpoint.map { try ControlAPI.environment($0) }
            return FailureRule(mode, scope, endpoint: only)
        }
    }

    struct ErrorBody: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    /// "Sandbox", "sandbox", "Production", "production" → the environment.
    static func environment(_ text: String) throws -> SimulatedEnvironment {
        guard let match = SimulatedEnvironment.allCases.first(where: { $0.pathSegment == text.lowercased() }) else {
            throw SimulatorError(.invalidRequest, "environment is Sandbox or Production, not \(text)")
        }
        return match
    }
}
