import AppStore
import AppleSimulator
import Crypto
import Foundation
import Ledger
import NIOHTTP1
import Postgres
import Primitives
import Spawning
import Testing

/// What the audit of issue 26 found untested: offers the ledger signs redeemed the way StoreKit
/// redeems them (the legacy signature and the introductory-offer eligibility JWS), Apple's rules
/// for Set App Account Token checked before asking (a renewal's id, a Family Sharing member's
/// purchase), an extension's new expiry in the user's entitlements, and the act in `dispute`.
@Suite("Support acts and offer signatures, proved end to end")
struct ActingProofTests {
    static let support = LedgerHarness.supportToken
    static let monthly = "com.example.pro.monthly"
    static let dayMs: Int64 = 86_400_000

    // MARK: - Offers

    @Test("a legacy promotional offer the ledger signed is redeemed and named in its purchase's timeline; changed, or a millisecond past its expires_at, the simulator refuses it")
    func legacyOfferRedeemed() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let order = try await ledger.post("/v1/orders", ["user_id": "p-lee", "product_id": Self.monthly])
            let orderToken = try #require(order.json["app_account_token"] as? String)
            let token = try #require(UUID(uuidString: orderToken))
            // An earlier signature of the offer, and one of another offer, which the purchase
            // does not redeem; then the one it does.
            let stale = try await Self.signLegacy(ledger, user: "p-lee", offer: "LOYAL")
            _ = try await ledger.simulator.advance(by: .seconds(60))
            let decoy = try await Self.signLegacy(ledger, user: "p-lee", offer: "OTHER")
            let signed = try await Self.signLegacy(ledger, user: "p-lee", offer: "LOYAL")
            #expect(decoy.status == 201 && signed.status == 201, "\(signed.json)")
            #expect(signed.json["app_account_token"] as? String == orderToken, "the legacy message signs the user's latest order's token")
            let offer = try Self.legacyOffer(signed, offerId: "LOYAL")
            #expect(signed.json["expires_at"] as? String == RevenueDay.iso8601(offer.timestamp + Self.dayMs))

            // Changed in transit (a better offer claimed): StoreKit refuses it, nothing is bought.
            var changed = offer
            changed.offerIdentifier = "LOYAL90"
            let tampered = changed
            let refusedChange = await #expect(throws: SimulatorError.self) {
                try await ledger.simulator.purchase(
                    appleId: "apple-p1", productId: Self.monthly, environment: .production, appAccountToken: token,
                    offer: .promotionalOffer(tampered))
            }
            #expect(refusedChange?.code == .invalidOffer)
            #expect(refusedChange?.message.contains("signature does not verify") == true, "\(String(describing: refusedChange))")
            #expect(ledger.simulator.transactions(of: "apple-p1").isEmpty)

            // As signed: redeemed, Apple's transaction carries the offer, the ledger delivers it.
            let purchase = try await ledger.simulator.purchase(
                appleId: "apple-p1", productId: Self.monthly, environment: .production, appAccountToken: token, offer: .promotionalOffer(offer))
            #expect(purchase.transaction.offerType == 2)
            #expect(purchase.transaction.offerIdentifier == "LOYAL")
            #expect(!purchase.transaction.isTrialPeriod, "a promotional offer takes the free trial's place")
            let delivered = try await ledger.post("/v1/transactions", ["user_id": "p-lee", "signed_transaction": purchase.signedTransaction])
            #expect(delivered.outcome == "delivered", "\(delivered.json)")

            // The purchase's timeline names the signature that allowed it (by its id, nonce and
            // the sha256 of the very signature the app was given), not the other offer's.
            let issued = try await Self.issuedSignatures(ledger)
            let named = try #require(issued.first { $0.nonce == offer.nonce.uuidString.lowercased() })
            let lee = try await ledger.recorded("p-lee")
            #expect(named.kind == .promotionalLegacy && named.offerId == "LOYAL" && named.userId == lee)
            #expect(named.signatureSha256 == Hex.encode(SHA256.hash(data: Data(offer.signature.utf8))))
            let other = try #require(issued.first { $0.offerId == "OTHER" })
            let entries = try await Self.timeline(ledger, "/v1/timelines/transactions/\(purchase.transactionId)")
            let entry = try #require(
                entries.first { Self.data($0)["signature_id"] as? String == named.signatureId }, "\(Self.summaries(entries))")
            #expect(entry["type"] as? String == "OfferSignatureIssued")
            #expect(entry["stream"] as? String == "offer-signature-\(named.signatureId)")
            #expect(Self.data(entry)["nonce"] as? String == offer.nonce.uuidString.lowercased())
            #expect((entry["summary"] as? String)?.contains("(signature \(named.signatureId))") == true, "\(Self.summaries(entries))")
            #expect(!entries.contains { Self.data($0)["signature_id"] as? String == other.signatureId }, "\(Self.summaries(entries))")
            #expect(Self.summaries(entries).contains { $0.contains("redeeming offer LOYAL (signature \(named.signatureId))") }, "\(Self.summaries(entries))")
            // Named alone: the offer's earlier signature is not the one that allowed it.
            let staleId = try Self.legacyOffer(stale, offerId: "LOYAL").nonce.uuidString.lowercased()
            #expect(!entries.contains { Self.data($0)["nonce"] as? String == staleId }, "\(Self.summaries(entries))")
            let deliveries = try await ledger.events(PurchaseDelivered.eventType)
            guard case .purchaseDelivered(let recorded)? = deliveries.last else { throw HarnessError("no delivery") }
            #expect(recorded.offerSignatureId == named.signatureId)

            // StoreKit takes a legacy signature up to the expires_at the ledger answered, to the
            // millisecond, on the simulated clock the ledger reads: a second signature of the
            // offer, made at the same simulated instant (the clock has not moved), is still good
            // then...
            let spare = try await Self.signLegacy(ledger, user: "p-lee", offer: "LOYAL")
            #expect(spare.status == 201, "\(spare.json)")
            let sameInstant = try Self.legacyOffer(spare, offerId: "LOYAL")
            try #require(sameInstant.timestamp == offer.timestamp, "both signed at one simulated instant")
            #expect(sameInstant.nonce != offer.nonce)
            _ = try await ledger.simulator.advance(by: .milliseconds(offer.timestamp + Self.dayMs - ledger.simulator.nowMilliseconds))
            let atExpiry = try await ledger.simulator.purchase(
                appleId: "apple-p2", productId: Self.monthly, environment: .production, appAccountToken: token,
                offer: .promotionalOffer(sameInstant))
            #expect(atExpiry.transaction.offerIdentifier == "LOYAL")
            // ...and not a millisecond later: the same signature the purchase redeemed is too old.
            _ = try await ledger.simulator.advance(by: .milliseconds(1))
            let expired = await #expect(throws: SimulatorError.self) {
                try await ledger.simulator.purchase(
                    appleId: "apple-p3", productId: Self.monthly, environment: .production, appAccountToken: token, offer: .promotionalOffer(offer))
            }
            #expect(expired?.code == .invalidOffer)
            #expect(expired?.message.contains("signed more than 24 hours ago") == true, "\(String(describing: expired))")
            // Re-dated to look fresh, it no longer verifies.
            var redated = offer
            redated.timestamp = ledger.simulator.nowMilliseconds
            let fresh = redated
            let refusedRedated = await #expect(throws: SimulatorError.self) {
                try await ledger.simulator.purchase(
                    appleId: "apple-p3", productId: Self.monthly, environment: .production, appAccountToken: token, offer: .promotionalOffer(fresh))
            }
            #expect(refusedRedated?.code == .invalidOffer)
            #expect(refusedRedated?.message.contains("signature does not verify") == true, "\(String(describing: refusedRedated))")
            #expect(ledger.simulator.transactions(of: "apple-p3").isEmpty)
        }
    }

    @Test("an introductory-offer eligibility the ledger signed is redeemed: false withholds the free trial, true keeps it, a changed one is refused")
    func eligibilityRedeemed() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            // Each customer bought before: the eligibility names one of their transactions.
            let ivyCoins = try await ledger.simulator.purchase(appleId: "apple-ivy", productId: "com.example.coins100", environment: .production)
            let joyCoins = try await ledger.simulator.purchase(appleId: "apple-joy", productId: "com.example.coins100", environment: .production)
            let withheld = try await ledger.post("/v1/offers/signatures", [
                "user_id": "e-ivy", "product_id": Self.monthly, "kind": "introductory_eligibility", "allow_introductory_offer": false,
                "transaction_id": ivyCoins.transactionId,
            ])
            let allowed = try await ledger.post("/v1/offers/signatures", [
                "user_id": "e-joy", "product_id": Self.monthly, "kind": "introductory_eligibility", "allow_introductory_offer": true,
                "transaction_id": joyCoins.transactionId,
            ])
            #expect(withheld.status == 201, "\(withheld.json)")
            #expect(allowed.status == 201, "\(allowed.json)")
            #expect(withheld.json["expires_at"] is NSNull)
            let withheldJWS = try #require(withheld.json["signature"] as? String)
            let allowedJWS = try #require(allowed.json["signature"] as? String)
            let claims = try #require(Self.payload(ofJWS: withheldJWS))
            #expect(claims["aud"] as? String == "introductory-offer-eligibility")
            #expect(claims["allowIntroductoryOffer"] as? Bool == false)
            #expect(claims["transactionId"] as? String == ivyCoins.transactionId)
            #expect((claims["nonce"] as? String)?.lowercased() == withheld.json["nonce"] as? String)

            // The claim turned to true after signing: refused, nothing bought.
            let tampered = try Self.replacingClaim("allowIntroductoryOffer", with: true, in: withheldJWS)
            let refused = await #expect(throws: SimulatorError.self) {
                try await ledger.simulator.purchase(
                    appleId: "apple-ivy", productId: Self.monthly, environment: .production, offer: .introductoryOfferEligibilityJWS(tampered))
            }
            #expect(refused?.code == .invalidOffer)
            #expect(refused?.message.contains("signature does not verify") == true, "\(String(describing: refused))")
            #expect(!ledger.simulator.transactions(of: "apple-ivy").contains { $0.productId == Self.monthly })

            // As signed: false buys a paid first period, true a free trial.
            let ivy = try await ledger.simulator.purchase(
                appleId: "apple-ivy", productId: Self.monthly, environment: .production, offer: .introductoryOfferEligibilityJWS(withheldJWS))
            #expect(!ivy.transaction.isTrialPeriod)
            #expect(ivy.transaction.priceMilliunits > 0)
            #expect(ivy.transaction.offerType == nil)
            let joy = try await ledger.simulator.purchase(
                appleId: "apple-joy", productId: Self.monthly, environment: .production, offer: .introductoryOfferEligibilityJWS(allowedJWS))
            #expect(joy.transaction.isTrialPeriod)
            #expect(joy.transaction.priceMilliunits == 0)

            // The ledger delivers both and reads the trial as Apple signed it.
            for (user, bought, inTrial) in [("e-ivy", ivy, false), ("e-joy", joy, true)] {
                let answer = try await ledger.post("/v1/transactions", ["user_id": user, "signed_transaction": bought.signedTransaction])
                #expect(answer.outcome == "delivered", "\(user): \(answer.json)")
                let view = try await ledger.get("/v1/subscriptions/\(bought.transaction.originalTransactionId)")
                #expect(view.json["in_trial"] as? Bool == inTrial, "\(user): \(view.json)")
            }

            // Recorded: who was told what about which transaction, in the user's timeline.
            let issued = try await Self.issuedSignatures(ledger)
            let ivyHandle = try await ledger.recorded("e-ivy")
            let ivyIssued = try #require(issued.first { $0.userId == ivyHandle })
            #expect(ivyIssued.kind == .introductoryEligibility)
            #expect(ivyIssued.allowIntroductoryOffer == false)
            #expect(ivyIssued.transactionId == ivyCoins.transactionId)
            #expect(ivyIssued.nonce == withheld.json["nonce"] as? String)
            let entries = try await Self.timeline(ledger, "/v1/timelines/users/e-ivy")
            #expect(
                Self.summaries(entries).contains { $0.hasPrefix("Signed introductory-offer eligibility (not allowed) for user e-ivy: \(Self.monthly)") },
                "\(Self.summaries(entries))")
        }
    }

    // MARK: - Set App Account Token: Apple's rules checked before asking

    @Test("Set App Account Token on a renewal's transaction id answers 404 not_found without asking Apple; on the original it is set")
    func tokenOnRenewalRefused() async throws {
        try await LedgerHarness.with(policy: .keep, askApple: true) { ledger in
            // Bought without the order's token, as before the app knew its user.
            let (order, bought) = try await ledger.orderAndBuy(user: "t-rae", product: Self.monthly, appleId: "apple-rae", useToken: false)
            #expect(try await ledger.submit(user: "t-rae", purchase: bought).outcome == "delivered")
            let token = try #require(order["app_account_token"] as? String)
            let original = bought.transaction.originalTransactionId
            _ = try await ledger.simulator.advance(days: 8)
            try await ledger.eventually("the first renewal is recorded") { try await ledger.count("SubscriptionRenewalSeen") >= 1 }
            let seen = try await Self.renewals(ledger)
            let renewal = try #require(seen.first { $0.originalTransactionId == original })
            try #require(renewal.transactionId != original, "a renewal has an id of its own")

            let body = #"{"app_account_token":"\#(token)","reason":"ticket 77"}"#
            try await Self.expectTokenRefused(
                ledger, on: renewal.transactionId, body: body, status: 404, code: "not_found", appleId: "apple-rae")

            // The original transaction, the same token: Apple is asked once and sets it.
            let set = try await ledger.request(.PUT, "/v1/transactions/\(original)/app-account-token", body: body, token: Self.support)
            #expect(set.status == 200, "\(set.json)")
            #expect(set.json["owner_user_id"] as? String == "t-rae")
            #expect(ledger.simulator.serverAPICalls(to: .setAppAccountToken) == 1)
        }
    }

    @Test("a Family Sharing member's purchase (a FAMILY_SHARED signed transaction) is refused Set App Account Token 422 family_shared without asking Apple; a purchased one is set")
    func tokenOnFamilySharedRefused() async throws {
        try await LedgerHarness.with(policy: .keep, askApple: true) { ledger in
            // The simulator has no Family Sharing: Apple's signed transaction of a purchase,
            // signed again by the simulator's CA (which the ledger trusts) as a member's.
            let bought = try await ledger.simulator.purchase(appleId: "apple-fam", productId: "com.example.removeads", environment: .production)
            let shared = try Self.familyShared(bought.signedTransaction, signedBy: ledger.simulator)
            let delivered = try await ledger.post("/v1/transactions", ["user_id": "f-kid", "signed_transaction": shared])
            #expect(delivered.outcome == "delivered", "\(delivered.json)")
            let recorded = try await Self.delivery(ledger, of: bought.transactionId)
            #expect(recorded?.familyShared == true, "the ledger holds it as a Family Sharing member's")
            let original = bought.transaction.originalTransactionId
            let order = try await ledger.post("/v1/orders", ["user_id": "f-kid", "product_id": "com.example.coins100"])
            let token = try #require(order.json["app_account_token"] as? String)
            let body = #"{"app_account_token":"\#(token)","reason":"ticket 78"}"#

            try await Self.expectTokenRefused(ledger, on: original, body: body, status: 422, code: "family_shared", appleId: "apple-fam")
            let ownership = try await ledger.get("/v1/ownership/\(original)")
            #expect(ownership.json["owner_user_id"] as? String == "f-kid")

            // The same user's own purchase of the product: set, Apple asked once.
            let own = try await ledger.simulator.purchase(appleId: "apple-own", productId: "com.example.removeads", environment: .production)
            let ownDelivered = try await ledger.post("/v1/transactions", ["user_id": "f-kid", "signed_transaction": own.signedTransaction])
            #expect(ownDelivered.outcome == "delivered", "\(ownDelivered.json)")
            let set = try await ledger.request(
                .PUT, "/v1/transactions/\(own.transaction.originalTransactionId)/app-account-token", body: body, token: Self.support)
            #expect(set.status == 200, "\(set.json)")
            #expect(ledger.simulator.serverAPICalls(to: .setAppAccountToken) == 1)
        }
    }

    // MARK: - Extensions

    @Test("after an extension the user's entitlement expires at the new date, and is still active past the old one")
    func entitlementFollowsExtension() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let original = try await Self.paidSubscription(ledger, user: "x-sam", appleId: "apple-sam")
            let entitledBefore = try await Self.entitlement(ledger, user: "x-sam", original: original)
            let before = try #require(entitledBefore)
            let expiresBefore = try #require(before["expires_at"] as? String)
            #expect(before["active"] as? Bool == true)
            #expect(try await ledger.get("/v1/subscriptions/\(original)").json["expires_at"] as? String == expiresBefore)

            let extended = try await ledger.post(
                "/v1/subscriptions/\(original)/extend", ["days": 10, "reason": "service_issue", "request_id": "ent-1"], token: Self.support)
            #expect(extended.status == 200, "\(extended.json)")
            let newExpiry = try #require(extended.json["new_expires_at"] as? String)
            let oldMs = try #require(Self.milliseconds(expiresBefore))
            let newMs = try #require(Self.milliseconds(newExpiry))
            #expect(newMs - oldMs == 10 * Self.dayMs, "\(expiresBefore) → \(newExpiry)")
            let entitledAfter = try await Self.entitlement(ledger, user: "x-sam", original: original)
            let after = try #require(entitledAfter)
            #expect(after["expires_at"] as? String == newExpiry)
            #expect(after["active"] as? Bool == true)

            // A day past the old end, inside the days granted: still entitled, until the new date.
            _ = try await ledger.simulator.advance(by: .milliseconds(oldMs + Self.dayMs - ledger.simulator.nowMilliseconds))
            let entitledLater = try await Self.entitlement(ledger, user: "x-sam", original: original)
            let later = try #require(entitledLater)
            #expect(later["active"] as? Bool == true, "\(later)")
            #expect(later["expires_at"] as? String == newExpiry)
        }
    }

    @Test("purchase-ledger dispute prints the extension in the subscription's timeline, with its days, reason, note, request id and actor")
    func disputeShowsTheExtension() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let original = try await Self.paidSubscription(ledger, user: "x-dee", appleId: "apple-dee")
            let extended = try await ledger.post(
                "/v1/subscriptions/\(original)/extend",
                ["days": 12, "reason": "customer_satisfaction", "request_id": "ticket-981", "note": "app down on launch day"], token: Self.support)
            #expect(extended.status == 200, "\(extended.json)")
            let effective = try #require(extended.json["effective_date"] as? String)
            // The actor names the support token as the server does: its sha256's first three bytes.
            let actor = "api:" + Hex.encode(Array(SHA256.hash(data: Array(Self.support.utf8))).prefix(3))

            let story = try await LedgerProcess.run(["dispute", original], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(story.exit == .success, "\(story.output)")
            #expect(story.output.contains("Dispute timeline of transaction \(original)"), "\(story.output)")
            let act = "Asked Apple to extend subscription \(original) by 12 days (customer_satisfaction, \"app down on launch day\", request ticket-981): "
                + "extended to \(effective) (by \(actor))"
            #expect(story.output.contains(act), "\(story.output)")
        }
    }

    // MARK: - Helpers

    /// A `promotional_legacy` signature for `user`'s monthly plan.
    static func signLegacy(_ ledger: LedgerHarness, user: String, offer: String) async throws -> LedgerHarness.Answer {
        try await ledger.post("/v1/offers/signatures", ["user_id": user, "product_id": monthly, "kind": "promotional_legacy", "offer_id": offer])
    }

    /// The ledger's answer as StoreKit takes it (`Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`).
    static func legacyOffer(_ answer: LedgerHarness.Answer, offerId: String) throws -> PromotionalOfferSignature {
        let keyId = try #require(answer.json["key_id"] as? String)
        let nonce = try #require(UUID(uuidString: answer.json["nonce"] as? String ?? ""))
        let timestamp = try #require(answer.json["timestamp"] as? Int)
        let signature = try #require(answer.json["signature"] as? String)
        return PromotionalOfferSignature(offerIdentifier: offerId, keyIdentifier: keyId, nonce: nonce, timestamp: Int64(timestamp), signature: signature)
    }

    /// The claims of a compact JWS, unverified.
    static func payload(ofJWS jws: String) -> [String: Any]? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return nil }
        return (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any]
    }

    /// `jws` with one claim changed and its signature kept: a tampered token.
    static func replacingClaim(_ name: String, with value: Any, in jws: String) throws -> String {
        var claims = try #require(payload(ofJWS: jws))
        claims[name] = value
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let changed = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        parts[1] = Base64URL.encode(changed)
        return parts.joined(separator: ".")
    }

    /// Set App Account Token on `transactionId` is refused with `status` and `code` before Apple
    /// is asked: no call reached the simulator, and no transaction of `appleId` holds a token.
    static func expectTokenRefused(
        _ ledger: LedgerHarness, on transactionId: String, body: String, status: Int, code: String, appleId: String
    ) async throws {
        let refused = try await ledger.request(.PUT, "/v1/transactions/\(transactionId)/app-account-token", body: body, token: Self.support)
        #expect(refused.status == status, "\(refused.json)")
        #expect(refused.errorCode == code, "\(refused.json)")
        #expect(ledger.simulator.serverAPICalls(to: .setAppAccountToken) == 0, "Apple was not asked")
        #expect(ledger.simulator.transactions(of: appleId).allSatisfy { $0.appAccountToken == nil })
    }

    /// Apple's signed transaction with `inAppOwnershipType` FAMILY_SHARED, signed by `simulator`'s CA.
    static func familyShared(_ signedTransaction: String, signedBy simulator: AppleSimulator) throws -> String {
        var fields = try #require(payload(ofJWS: signedTransaction))
        #expect(fields["inAppOwnershipType"] as? String == "PURCHASED")
        fields["inAppOwnershipType"] = "FAMILY_SHARED"
        return try simulator.certificateAuthority.sign(payloadJSON: JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
    }

    /// Every `OfferSignatureIssued` recorded, in log order.
    static func issuedSignatures(_ ledger: LedgerHarness) async throws -> [OfferSignatureIssued] {
        let events = try await ledger.events(OfferSignatureIssued.eventType)
        var issued: [OfferSignatureIssued] = []
        for case .offerSignatureIssued(let event) in events { issued.append(event) }
        return issued
    }

    /// Every `SubscriptionRenewalSeen` recorded, in log order.
    static func renewals(_ ledger: LedgerHarness) async throws -> [SubscriptionRenewalSeen] {
        let events = try await ledger.events(SubscriptionRenewalSeen.eventType)
        var seen: [SubscriptionRenewalSeen] = []
        for case .subscriptionRenewalSeen(let event) in events { seen.append(event) }
        return seen
    }

    /// The `PurchaseDelivered` of `transactionId`, if recorded.
    static func delivery(_ ledger: LedgerHarness, of transactionId: String) async throws -> PurchaseDelivered? {
        let events = try await ledger.events(PurchaseDelivered.eventType)
        for case .purchaseDelivered(let delivered) in events where delivered.transactionId == transactionId { return delivered }
        return nil
    }

    /// The entries of a timeline, as finance reads it.
    static func timeline(_ ledger: LedgerHarness, _ path: String) async throws -> [[String: any Sendable]] {
        let answer = try await ledger.get(path, token: LedgerHarness.financeToken)
        #expect(answer.status == 200, "\(path): \(answer.json)")
        return answer.json["entries"] as? [[String: any Sendable]] ?? []
    }

    static func data(_ entry: [String: any Sendable]) -> [String: any Sendable] {
        entry["data"] as? [String: any Sendable] ?? [:]
    }

    static func summaries(_ entries: [[String: any Sendable]]) -> [String] {
        entries.compactMap { $0["summary"] as? String }
    }

    /// The entitlement of `original` in `GET /v1/users/{user}`.
    static func entitlement(_ ledger: LedgerHarness, user: String, original: String) async throws -> [String: any Sendable]? {
        let view = try await ledger.get("/v1/users/\(user)")
        return (view.json["entitlements"] as? [[String: any Sendable]] ?? []).first { $0["original_transaction_id"] as? String == original }
    }

    /// A monthly plan bought and delivered, past its free trial into its first paid period (Apple
    /// extends no free trial, 4030004); its original transaction id.
    static func paidSubscription(_ ledger: LedgerHarness, user: String, appleId: String) async throws -> String {
        let (_, bought) = try await ledger.orderAndBuy(user: user, product: monthly, appleId: appleId)
        #expect(try await ledger.submit(user: user, purchase: bought).outcome == "delivered")
        _ = try await ledger.simulator.advance(days: 8)
        let original = bought.transaction.originalTransactionId
        try await ledger.eventually("the first paid period is recorded") {
            try await Self.renewals(ledger).contains { $0.originalTransactionId == original }
        }
        return original
    }

    /// Milliseconds since 1970 of an ISO 8601 time with milliseconds, as the API writes them.
    static func milliseconds(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text).map { Int64(($0.timeIntervalSince1970 * 1_000).rounded()) }
    }
}
