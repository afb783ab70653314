import AppStore
import AppleSimulator
import Crypto
import Foundation
import Primitives
import Testing

/// The app server's side of offers, written here from Apple's documentation rather than taken
/// from the simulator: an In-App Purchase key that signs promotional offers the original way
/// and both JWS kinds, and a simulator configured with its public half.
struct OfferKey {
    static let monthly = "com.example.pro.monthly"
    static let yearly = "com.example.pro.yearly"
    static let promotionalAudience = "promotional-offer"
    static let eligibilityAudience = "introductory-offer-eligibility"

    let privateKey = P256.Signing.PrivateKey()

    func configuration() -> AppleSimulator.Configuration {
        var configuration = SimulatorHarness.configuration(notificationVersions: [.v2])
        configuration.serverAPI = ServerAPIAuthentication(
            publicKeyPEM: privateKey.publicKey.pemRepresentation, issuerId: ServerAPIKey.issuerId,
            keyId: ServerAPIKey.keyId, bundleId: ServerAPIKey.bundleId)
        return configuration
    }

    /// The original signature: DER ECDSA over the U+2063-joined fields, base64.
    func legacy(
        productId: String = OfferKey.monthly, offerId: String = "winback-50", appAccountToken: UUID? = nil,
        timestamp: Int64, keyId: String = ServerAPIKey.keyId, bundleId: String = ServerAPIKey.bundleId,
        signer: P256.Signing.PrivateKey? = nil
    ) throws -> PromotionalOfferSignature {
        let nonce = UUID()
        let message = [
            bundleId, keyId, productId, offerId, appAccountToken?.uuidString.lowercased() ?? "",
            nonce.uuidString.lowercased(), String(timestamp),
        ].joined(separator: "\u{2063}")
        let signature = try (signer ?? privateKey).signature(for: SHA256.hash(data: Data(message.utf8)))
        return PromotionalOfferSignature(
            offerIdentifier: offerId, keyIdentifier: keyId, nonce: nonce, timestamp: timestamp,
            signature: signature.derRepresentation.base64EncodedString())
    }

    /// A compact JWS of `claims`: header `alg` ES256, `kid`, `typ` JWT; raw r ‖ s signature.
    func jws(_ claims: [String: Any], keyId: String = ServerAPIKey.keyId, signer: P256.Signing.PrivateKey? = nil) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": keyId, "typ": "JWT"], options: [.sortedKeys])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try (signer ?? privateKey).signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// The claims both JWS kinds carry (`iss`, `bid`, `aud`, `iat`, `nonce`, `productId`), plus `extra`.
    static func claims(
        audience: String = OfferKey.promotionalAudience, productId: String = OfferKey.monthly,
        bundleId: String = ServerAPIKey.bundleId, _ extra: [String: Any]
    ) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": ServerAPIKey.issuerId, "bid": bundleId, "aud": audience, "iat": Int(Date().timeIntervalSince1970),
            "nonce": UUID().uuidString.lowercased(), "productId": productId,
        ]
        claims.merge(extra) { _, given in given }
        return claims
    }

    /// `jws` with its payload replaced by `claims`, the signature kept: a tampered token.
    static func tampered(_ jws: String, claims: [String: Any]) throws -> String {
        let parts = jws.split(separator: ".")
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return "\(parts[0]).\(Base64URL.encode(payload)).\(parts[2])"
    }
}

/// An offer the App Store must refuse, and the product bought with it.
struct RefusedOffer: Sendable {
    var name: String
    var offer: OfferRedemption
    var productId: String

    init(_ name: String, _ offer: OfferRedemption, productId: String = OfferKey.monthly) {
        self.name = name
        self.offer = offer
        self.productId = productId
    }
}

@Suite("offers redeemed with a purchase are verified with the In-App Purchase key")
struct OfferRedemptionTests {
    @Test("a promotional offer signed the original way is redeemed: offerType 2 and its id are signed, and no free trial")
    func legacyAccepted() async throws {
        let key = OfferKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let appAccountToken = UUID()
            let signature = try key.legacy(appAccountToken: appAccountToken, timestamp: simulator.nowMilliseconds - 3_600_000)
            let purchase = try await simulator.purchase(
                appleId: "o", productId: OfferKey.monthly, appAccountToken: appAccountToken, offer: .promotionalOffer(signature))
            #expect(purchase.transaction.offerType == 2)
            #expect(purchase.transaction.offerIdentifier == "winback-50")
            #expect(!purchase.transaction.isTrialPeriod)
            #expect(purchase.transaction.expiresDateMs == SimulatorHarness.startMs + 31 * SimulatorHarness.dayMs)
            let signed = try jwsPayload(purchase.signedTransaction)
            #expect(signed["offerType"] as? Int == 2)
            #expect(signed["offerIdentifier"] as? String == "winback-50")
            let receipt = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData)
            let inApp = (receipt.json?["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]]
            #expect(inApp?.first?["promotional_offer_id"] as? String == "winback-50")

            // The offer priced the period bought; the renewal is billed without it.
            try await simulator.advance(days: 32)
            let renewal = try #require(simulator.transactions(of: "o").last)
            #expect(renewal.transactionReason == "RENEWAL")
            #expect(try jwsPayload(try simulator.signedTransaction(renewal.transactionId))["offerType"] == nil)
        }
    }

    @Test("a promotional offer JWS is redeemed, with a transactionId of the customer's or without one")
    func jwsAccepted() async throws {
        let key = OfferKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let coins = try await simulator.purchase(appleId: "v", productId: "com.example.coins100")
            let withTransaction = try key.jws(
                OfferKey.claims(["offerIdentifier": "loyal-3m", "transactionId": coins.transactionId]))
            let loyal = try await simulator.purchase(
                appleId: "v", productId: OfferKey.monthly, offer: .promotionalOfferJWS(withTransaction))
            #expect(loyal.transaction.offerType == 2)
            #expect(loyal.transaction.offerIdentifier == "loyal-3m")
            #expect(try jwsPayload(loyal.signedTransaction)["offerIdentifier"] as? String == "loyal-3m")

            let without = try key.jws(OfferKey.claims(productId: OfferKey.yearly, ["offerIdentifier": "first-year"]))
            let fresh = try await simulator.purchase(appleId: "w", productId: OfferKey.yearly, offer: .promotionalOfferJWS(without))
            #expect(fresh.transaction.offerIdentifier == "first-year")
        }
    }

    @Test("an introductory offer eligibility saying false withholds the free trial; saying true keeps it")
    func introductoryOfferEligibility() async throws {
        let key = OfferKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let coins = try await simulator.purchase(appleId: "i1", productId: "com.example.coins100")
            // The customer's appTransactionId serves as the transactionId, as Apple suggests.
            let appTransactionId = try #require(try jwsPayload(coins.signedTransaction)["appTransactionId"] as? String)
            let withheld = try await simulator.purchase(
                appleId: "i1", productId: OfferKey.monthly,
                offer: .introductoryOfferEligibilityJWS(
                    try key.jws(
                        OfferKey.claims(
                            audience: OfferKey.eligibilityAudience,
                            ["allowIntroductoryOffer": false, "transactionId": appTransactionId]))))
            #expect(!withheld.transaction.isTrialPeriod)
            #expect(withheld.transaction.priceMilliunits == 4990)
            #expect(withheld.transaction.expiresDateMs == SimulatorHarness.startMs + 31 * SimulatorHarness.dayMs)
            #expect(try jwsPayload(withheld.signedTransaction)["offerType"] == nil)

            let other = try await simulator.purchase(appleId: "i2", productId: "com.example.coins100")
            let allowed = try await simulator.purchase(
                appleId: "i2", productId: OfferKey.monthly,
                offer: .introductoryOfferEligibilityJWS(
                    try key.jws(
                        OfferKey.claims(
                            audience: OfferKey.eligibilityAudience,
                            ["allowIntroductoryOffer": true, "transactionId": other.transactionId]))))
            #expect(allowed.transaction.isTrialPeriod)
            #expect(try jwsPayload(allowed.signedTransaction)["offerType"] as? Int == 1)
        }
    }

    @Test("tampered, expired, other-key, other-app and other-product offers are refused, and nothing is bought")
    func refused() async throws {
        let key = OfferKey()
        let stranger = OfferKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let someoneElse = try await simulator.purchase(appleId: "s", productId: "com.example.coins100")
            let now = simulator.nowMilliseconds
            let valid = try key.legacy(timestamp: now)
            var changed = valid
            changed.offerIdentifier = "winback-90"
            let validClaims = OfferKey.claims(["offerIdentifier": "winback-50"])
            let validJWS = try key.jws(validClaims)
            var changedClaims = validClaims
            changedClaims["offerIdentifier"] = "winback-90"
            let monthly = OfferKey.monthly
            let refusals: [RefusedOffer] = [
                RefusedOffer("legacy, offer changed after signing", .promotionalOffer(changed)),
                RefusedOffer(
                    "legacy, signed for another app account token",
                    .promotionalOffer(try key.legacy(appAccountToken: UUID(), timestamp: now))),
                RefusedOffer("legacy, signed 24 hours and 1 ms ago", .promotionalOffer(try key.legacy(timestamp: now - 86_400_001))),
                RefusedOffer("legacy, another key id", .promotionalOffer(try key.legacy(timestamp: now, keyId: "OTHERKEY99"))),
                RefusedOffer(
                    "legacy, another key", .promotionalOffer(try key.legacy(timestamp: now, signer: stranger.privateKey))),
                RefusedOffer(
                    "legacy, another app", .promotionalOffer(try key.legacy(timestamp: now, bundleId: "com.example.other"))),
                RefusedOffer(
                    "legacy, another product", .promotionalOffer(try key.legacy(productId: OfferKey.yearly, timestamp: now))),
                RefusedOffer(
                    "JWS, claims changed after signing",
                    .promotionalOfferJWS(try OfferKey.tampered(validJWS, claims: changedClaims))),
                RefusedOffer("JWS, another kid", .promotionalOfferJWS(try key.jws(validClaims, keyId: "OTHERKEY99"))),
                RefusedOffer("JWS, another key", .promotionalOfferJWS(try key.jws(validClaims, signer: stranger.privateKey))),
                RefusedOffer(
                    "JWS, another app",
                    .promotionalOfferJWS(try key.jws(OfferKey.claims(bundleId: "com.example.other", ["offerIdentifier": "x"])))),
                RefusedOffer("JWS, another product", .promotionalOfferJWS(validJWS), productId: OfferKey.yearly),
                RefusedOffer(
                    "JWS, the eligibility audience",
                    .promotionalOfferJWS(
                        try key.jws(OfferKey.claims(audience: OfferKey.eligibilityAudience, ["offerIdentifier": "x"])))),
                RefusedOffer(
                    "JWS, someone else's transaction",
                    .promotionalOfferJWS(
                        try key.jws(OfferKey.claims(["offerIdentifier": "x", "transactionId": someoneElse.transactionId])))),
                RefusedOffer(
                    "eligibility without a transactionId",
                    .introductoryOfferEligibilityJWS(
                        try key.jws(OfferKey.claims(audience: OfferKey.eligibilityAudience, ["allowIntroductoryOffer": false])))),
                RefusedOffer(
                    "an offer on a consumable",
                    .promotionalOffer(try key.legacy(productId: "com.example.coins100", timestamp: now)),
                    productId: "com.example.coins100"),
            ]
            for refusal in refusals {
                let error = await #expect(throws: SimulatorError.self, "\(refusal.name)") {
                    try await simulator.purchase(appleId: "r", productId: refusal.productId, offer: refusal.offer)
                }
                #expect(error?.code == .invalidOffer, "\(refusal.name)")
            }
            #expect(simulator.transactions(of: "r").isEmpty)
            // Unchanged, the same offers pass: each refusal was for its change alone.
            let legacy = try await simulator.purchase(appleId: "r", productId: monthly, offer: .promotionalOffer(valid))
            #expect(legacy.transaction.offerType == 2)
            let signed = try await simulator.purchase(appleId: "r2", productId: monthly, offer: .promotionalOfferJWS(validJWS))
            #expect(signed.transaction.offerType == 2)
        }
    }

    @Test("an original signature is good for 24 hours on the simulated clock")
    func validityOnTheSimulatedClock() async throws {
        let key = OfferKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let first = try key.legacy(timestamp: simulator.nowMilliseconds)
            let second = try key.legacy(timestamp: simulator.nowMilliseconds)
            try await simulator.advance(by: .seconds(86_400))
            _ = try await simulator.purchase(appleId: "t1", productId: OfferKey.monthly, offer: .promotionalOffer(first))
            try await simulator.advance(by: .milliseconds(1))
            let error = await #expect(throws: SimulatorError.self) {
                try await simulator.purchase(appleId: "t2", productId: OfferKey.monthly, offer: .promotionalOffer(second))
            }
            #expect(error?.code == .invalidOffer)
        }
    }

    @Test("the control API takes an offer with a purchase and answers 400 invalid_offer for one refused")
    func controlAPI() async throws {
        let key = OfferKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchases = "\(running.baseURL)/control/purchases"
            let jws = try key.jws(OfferKey.claims(["offerIdentifier": "winback-50"]))
            let created = try await RawHTTP.post(
                purchases, json: ["apple_id": "c", "product_id": OfferKey.monthly, "promotional_offer_jws": jws])
            #expect(created.status == 201)
            #expect(created.json?["offer_identifier"] as? String == "winback-50")
            let signed = try jwsPayload(try #require(created.json?["signed_transaction"] as? String))
            #expect(signed["offerType"] as? Int == 2)

            let legacy = try key.legacy(timestamp: running.simulator.nowMilliseconds)
            func body(appleId: String, offerId: String) -> [String: Any] {
                [
                    "apple_id": appleId, "product_id": OfferKey.monthly,
                    "promotional_offer": [
                        "offer_identifier": offerId, "key_identifier": legacy.keyIdentifier,
                        "nonce": legacy.nonce.uuidString, "timestamp": legacy.timestamp, "signature": legacy.signature,
                    ] as [String: Any],
                ]
            }
            #expect(try await RawHTTP.post(purchases, json: body(appleId: "c2", offerId: "winback-50")).status == 201)
            let refused = try await RawHTTP.post(purchases, json: body(appleId: "c3", offerId: "winback-90"))
            #expect(refused.status == 400)
            #expect((refused.json?["error"] as? [String: Any])?["code"] as? String == "invalid_offer")
            var both = body(appleId: "c4", offerId: "winback-50")
            both["promotional_offer_jws"] = jws
            let ambiguous = try await RawHTTP.post(purchases, json: both)
            #expect((ambiguous.json?["error"] as? [String: Any])?["code"] as? String == "invalid_request")
        }
    }
}
