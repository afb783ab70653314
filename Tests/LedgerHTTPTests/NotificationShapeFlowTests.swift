import AppStore
import AppleSimulator
import EventStore
import Foundation
import Ledger
import LedgerStore
import NIOHTTP1
import Postgres
import Primitives
import Testing

/// Every payload shape of app-store-server-library's test resources (Tests/Fixtures/apple), made
/// this app's (bundle, environment, dates moved to now, everything else verbatim), signed by the
/// simulator's CA and posted to `POST /v1/notifications/apple`: each is answered 200 and kept,
/// whichever block names the app, whatever Apple adds later.
@Suite("Every notification Apple signs is recorded, none refused")
struct NotificationShapeFlowTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/apple")
    /// The `signedDate` of Apple's model fixtures; their other dates are near it.
    static let appleSignedAt: Int64 = 1_698_148_900_000
    static let appleUUID = "002e14d5-51f5-4503-b5a8-c3a1af68eb20"

    struct Shape: Sendable {
        var fixture: String
        var type: String
        var subtype: String?
        var environment: String
        /// The transaction its `data` carries (Apple's fixture transaction), nil for the blocks without one.
        var transactionId: String?
    }

    static let shapes: [Shape] = [
        Shape(fixture: "notification-v2-decoded-subscribed-initial_buy-asslib.json", type: "SUBSCRIBED", subtype: "INITIAL_BUY",
              environment: "Sandbox", transactionId: "23456"),
        Shape(fixture: "notification-v2-decoded-consumption_request-asslib.json", type: "CONSUMPTION_REQUEST", subtype: nil,
              environment: "Sandbox", transactionId: "23456"),
        Shape(fixture: "notification-v2-decoded-renewal_extension-summary-asslib.json", type: "RENEWAL_EXTENSION", subtype: "SUMMARY",
              environment: "Sandbox", transactionId: nil),
        Shape(fixture: "notification-v2-decoded-external_purchase_token-asslib.json", type: "EXTERNAL_PURCHASE_TOKEN",
              subtype: "UNREPORTED", environment: "Production", transactionId: nil),
        Shape(fixture: "notification-v2-decoded-external_purchase_token-sandbox-asslib.json", type: "EXTERNAL_PURCHASE_TOKEN",
              subtype: "UNREPORTED", environment: "Sandbox", transactionId: nil),
        Shape(fixture: "notification-v2-decoded-rescind_consent-asslib.json", type: "RESCIND_CONSENT", subtype: nil,
              environment: "Sandbox", transactionId: nil),
    ]

    @Test("each notification shape in Apple's library resources is answered 200 and recorded with its type, its body kept verbatim")
    func everyShape() async throws {
        try await LedgerHarness.with { ledger in
            let now = ledger.simulator.nowMilliseconds
            let transaction = try Self.sign(ledger, try Self.adapt("jws-decoded-transaction-autorenew-asslib.json", now: now))
            let renewal = try Self.sign(ledger, try Self.adapt("jws-decoded-renewalinfo-billing-retry-grace-asslib.json", now: now))
            // RESCIND_CONSENT's app transaction is kept, not verified: Xcode's signed one, as it came.
            let appTransaction = try String(contentsOf: Self.fixtures.appendingPathComponent("jws-apptransaction-xcode-fractional-ms-asslib.jws"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            var bodies: [String] = []
            for shape in Self.shapes {
                let uuid = UUID().uuidString.lowercased()
                let payload = try Self.adapt(shape.fixture, now: now, uuid: uuid)
                    .replacingOccurrences(of: #""signed_transaction_info_value""#, with: "\"\(transaction)\"")
                    .replacingOccurrences(of: #""signed_renewal_info_value""#, with: "\"\(renewal)\"")
                    .replacingOccurrences(of: #""signed_app_transaction_info_value""#, with: "\"\(appTransaction)\"")
                let body = Self.body(try Self.sign(ledger, payload))
                let answer = try await ledger.request(.POST, "/v1/notifications/apple", body: body, token: nil)
                #expect(answer.status == 200, "\(shape.fixture): \(answer.status) \(answer.json)")
                #expect(answer.json["status"] as? String == "recorded", "\(shape.fixture)")
                #expect(answer.json["notification_id"] as? String == uuid, "\(shape.fixture)")
                let received = try #require(try await Self.received(ledger, id: uuid), "\(shape.fixture) is not recorded")
                #expect(received.version == "v2")
                #expect(received.notificationType == shape.type)
                #expect(received.subtype == shape.subtype)
                #expect(received.environment == shape.environment, "\(shape.fixture)")
                #expect(received.transactionId == shape.transactionId, "\(shape.fixture)")
                #expect(received.unreadable == nil)
                try await Self.expectKeptVerbatim(ledger, body: body, as: received)
                bodies.append(body)
            }
            #expect(try await ledger.count("AppleNotificationReceived") == Int64(Self.shapes.count))
            // Apple sends one again: answered 200, recorded once.
            let again = try await ledger.request(.POST, "/v1/notifications/apple", body: bodies[3], token: nil)
            #expect(again.status == 200)
            #expect(again.json["status"] as? String == "duplicate")
            #expect(try await ledger.count("AppleNotificationReceived") == Int64(Self.shapes.count))
        }
    }

    @Test("a notification and its transaction signed with fractional milliseconds, as Xcode's StoreKit testing signs, are recorded")
    func fractionalMilliseconds() async throws {
        try await LedgerHarness.with { ledger in
            let now = ledger.simulator.nowMilliseconds
            // Xcode's own signed payloads (fractional dates), made this app's and moved to now.
            func xcode(_ fixture: String) throws -> String {
                let parts = try String(contentsOf: Self.fixtures.appendingPathComponent(fixture), encoding: .utf8).split(separator: ".")
                let payload = String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
                    .replacingOccurrences(of: #""com.example.naturelab.backyardbirds.example""#, with: "\"\(LedgerHarness.bundleId)\"")
                    .replacingOccurrences(of: #""Xcode""#, with: #""Sandbox""#)
                #expect(payload.range(of: #"\d\.\d"#, options: .regularExpression) != nil, "the fixture's dates carry fractions")
                return try Self.sign(ledger, try Self.shiftingDates(payload, by: now - 1_697_679_936_056))
            }
            let uuid = UUID().uuidString.lowercased()
            let transaction = try xcode("jws-transaction-xcode-fractional-ms-asslib.jws")
            let renewal = try xcode("jws-renewalinfo-xcode-fractional-ms-asslib.jws")
            let notification = #"""
                {"notificationType":"DID_RENEW","notificationUUID":"\#(uuid)","version":"2.0","signedDate":\#(now).5,
                 "data":{"appAppleId":1234,"bundleId":"\#(LedgerHarness.bundleId)","bundleVersion":"1","environment":"Sandbox","status":1,
                 "signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)"}}
                """#
            let body = Self.body(try Self.sign(ledger, notification))
            let answer = try await ledger.request(.POST, "/v1/notifications/apple", body: body, token: nil)
            #expect(answer.status == 200, "\(answer.json)")
            let received = try #require(try await Self.received(ledger, id: uuid))
            #expect(received.notificationType == "DID_RENEW")
            #expect(received.transactionId == "0" && received.originalTransactionId == "0")
            try await Self.expectKeptVerbatim(ledger, body: body, as: received)
        }
    }

    @Test("values Apple adds later (a notification type and subtype, a revocation type, offer type and billing plan) are recorded and kept verbatim")
    func unknownValues() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u1", product: "com.example.removeads", appleId: "apple-1")
            #expect(try await ledger.submit(user: "u1", purchase: purchase).outcome == "delivered")
            let now = ledger.simulator.nowMilliseconds
            func notification(_ type: String, subtype: String?, transaction: String) -> String {
                let sub = subtype.map { #","subtype":"\#($0)""# } ?? ""
                return #"{"notificationType":"\#(type)"\#(sub),"notificationUUID":"\#(UUID().uuidString.lowercased())","version":"2.0","signedDate":\#(now),"data":{"appAppleId":1234,"bundleId":"\#(LedgerHarness.bundleId)","bundleVersion":"1","environment":"Production","status":9,"signedTransactionInfo":"\#(transaction)"}}"#
            }
            // A type and subtype Apple has not published, about a delivered transaction.
            let paused = Self.body(try Self.sign(ledger, notification("SUBSCRIPTION_PAUSED", subtype: "BY_CUSTOMER", transaction: purchase.signedTransaction)))
            let first = try await ledger.request(.POST, "/v1/notifications/apple", body: paused, token: nil)
            #expect(first.status == 200, "\(first.json)")
            // The same transaction revoked with a revocation type, offer type and billing plan Apple adds later.
            let signed = String(decoding: try #require(Base64URL.decode(purchase.signedTransaction.split(separator: ".")[1])), as: UTF8.self)
            #expect(!signed.contains("revocationType") && !signed.contains("offerType") && !signed.contains("billingPlanType"))
            let later = String(signed.dropLast())
                + #","revocationDate":\#(now),"revocationReason":0,"revocationType":"REFUND_STORE_CREDIT","offerType":9,"#
                + #""offerDiscountType":"BUY_ONE_GET_ONE","billingPlanType":"QUARTERLY"}"#
            let refund = Self.body(try Self.sign(ledger, notification("REFUND", subtype: nil, transaction: try Self.sign(ledger, later))))
            let second = try await ledger.request(.POST, "/v1/notifications/apple", body: refund, token: nil)
            #expect(second.status == 200, "\(second.json)")

            let received = try await ledger.events("AppleNotificationReceived").compactMap { event -> AppleNotificationReceived? in
                if case .appleNotificationReceived(let r) = event { return r }
                return nil
            }
            let pausedReceived = try #require(received.first { $0.notificationType == "SUBSCRIPTION_PAUSED" })
            #expect(pausedReceived.subtype == "BY_CUSTOMER")
            #expect(pausedReceived.transactionId == purchase.transactionId)
            try await Self.expectKeptVerbatim(ledger, body: paused, as: pausedReceived)
            let refundReceived = try #require(received.first { $0.notificationType == "REFUND" })
            #expect(refundReceived.transactionId == purchase.transactionId)
            try await Self.expectKeptVerbatim(ledger, body: refund, as: refundReceived)
            // The round trip: the kept body, opened, still says what Apple said, to the letter.
            let kept = try #require(try await ledger.server.service.documents.get(refundReceived.documentSha256))
            let keptTransaction = try Self.nestedTransactionPayload(ofBody: kept)
            for value in [#""revocationType":"REFUND_STORE_CREDIT""#, #""offerType":9"#, #""billingPlanType":"QUARTERLY""#,
                          #""offerDiscountType":"BUY_ONE_GET_ONE""#] {
                #expect(keptTransaction.contains(value), "\(value) kept")
            }
            // And the transaction's timeline shows the new type and subtype as Apple sent them.
            try await ledger.eventually("the timeline shows the notification") {
                let timeline = try await ledger.get("/v1/timelines/transactions/\(purchase.transactionId)", token: LedgerHarness.financeToken)
                let entries = (timeline.json["entries"] as? [[String: any Sendable]]) ?? []
                return entries.contains {
                    let data = $0["data"] as? [String: any Sendable]
                    return data?["notification_type"] as? String == "SUBSCRIPTION_PAUSED" && data?["subtype"] as? String == "BY_CUSTOMER"
                }
            }
        }
    }

    @Test("a notification whose signature verifies but whose shape is refused answers 400, not 401, and is kept unread once")
    func unreadableShape() async throws {
        try await LedgerHarness.with { ledger in
            let uuid = UUID().uuidString.lowercased()
            // `status` as a word where Apple documents a number: this build cannot read it.
            let payload = #"{"notificationType":"CONSUMPTION_REQUEST","notificationUUID":"\#(uuid)","version":"2.0","signedDate":\#(ledger.simulator.nowMilliseconds),"data":{"appAppleId":1234,"bundleId":"\#(LedgerHarness.bundleId)","environment":"Sandbox","status":"ACTIVE","consumptionRequestReason":"LEGAL"}}"#
            let jws = try Self.sign(ledger, payload)
            let body = Self.body(jws)
            for _ in 1...2 {
                let answer = try await ledger.request(.POST, "/v1/notifications/apple", body: body, token: nil)
                #expect(answer.status == 400, "\(answer.json)")
                #expect(answer.errorCode == "invalid_request")
                let message = (answer.json["error"] as? [String: any Sendable])?["message"] as? String ?? ""
                #expect(message.contains("signature verifies"), "\(message)")
            }
            let received = try await ledger.events("AppleNotificationReceived")
            #expect(received.count == 1, "kept once however often Apple sends it")
            guard case .appleNotificationReceived(let kept)? = received.first else { return }
            #expect(kept.notificationId == uuid && kept.notificationType == "CONSUMPTION_REQUEST" && kept.environment == "Sandbox")
            #expect(kept.unreadable?.contains("status") == true, "\(kept.unreadable ?? "nil")")
            #expect(kept.transactionId == nil)
            try await Self.expectKeptVerbatim(ledger, body: body, as: kept)
            // Kept apart: the notification itself is still unrecorded, for a build that reads it.
            #expect(try await ledger.server.service.log.store.read(stream: Streams.notification(uuid), limit: 1).isEmpty)
            #expect(try await ledger.server.service.reads.unansweredConsumptionRequests().isEmpty, "an unread request is not answered")
            // The same bytes with a flipped signature are not Apple's: 401, nothing more kept.
            var parts = jws.split(separator: ".").map(String.init)
            var signature = try #require(Base64URL.decode(parts[2]))
            signature[7] ^= 0x01
            parts[2] = Base64URL.encode(signature)
            let forged = try await ledger.request(.POST, "/v1/notifications/apple", body: Self.body(parts.joined(separator: ".")), token: nil)
            #expect(forged.status == 401)
            #expect(try await ledger.count("AppleNotificationReceived") == 1)
        }
    }

    // MARK: - Helpers

    /// A fixture's text made this ledger's: its bundle, `environment` for `LocalTesting`, a fresh
    /// UUID, its dates moved so its `signedDate` is `now`. Everything else as Apple wrote it.
    static func adapt(_ fixture: String, now: Int64, environment: String = "Sandbox", uuid: String? = nil) throws -> String {
        var text = try String(contentsOf: fixtures.appendingPathComponent(fixture), encoding: .utf8)
            .replacingOccurrences(of: #""com.example""#, with: "\"\(LedgerHarness.bundleId)\"")
            .replacingOccurrences(of: #""LocalTesting""#, with: "\"\(environment)\"")
        if let uuid { text = text.replacingOccurrences(of: appleUUID, with: uuid) }
        return try shiftingDates(text, by: now - appleSignedAt)
    }

    /// `text` with every date in milliseconds near 2023 (13 digits, with or without a fraction)
    /// moved by `offset`, its fraction kept.
    static func shiftingDates(_ text: String, by offset: Int64) throws -> String {
        let date = try Regex(#"\b1[67]\d{11}(\.\d+)?\b"#)
        return text.replacing(date) { match -> String in
            let found = text[match.range]
            let whole = found.prefix { $0 != "." }
            return String(Int64(whole)! + offset) + found.dropFirst(whole.count)
        }
    }

    static func sign(_ ledger: LedgerHarness, _ json: String) throws -> String {
        try ledger.simulator.certificateAuthority.sign(payloadJSON: Data(json.utf8))
    }

    static func body(_ signedPayload: String) -> String { #"{"signedPayload":"\#(signedPayload)"}"# }

    /// The `AppleNotificationReceived` recorded for notification `id`, if any.
    static func received(_ ledger: LedgerHarness, id: String) async throws -> AppleNotificationReceived? {
        for case .appleNotificationReceived(let received) in try await ledger.events("AppleNotificationReceived") where received.notificationId == id {
            return received
        }
        return nil
    }

    /// The event names the body by its sha256, and the documents table holds it byte for byte.
    static func expectKeptVerbatim(
        _ ledger: LedgerHarness, body: String, as received: AppleNotificationReceived, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        // Named by what is stored: the body itself, or its envelope when it is about a sealed
        // person (docs/erasure.md); opened, it is the body to the byte.
        let raw = try await ledger.pool.withConnection { connection in
            try connection.query("SELECT content FROM documents WHERE sha256 = decode(\(received.documentSha256), 'hex')").first?.decode(0, as: [UInt8].self)
        }
        #expect(DocumentStore.name(of: try #require(raw, sourceLocation: sourceLocation)) == received.documentSha256, sourceLocation: sourceLocation)
        let stored = try await ledger.server.service.documents.get(received.documentSha256)
        #expect(stored == Array(body.utf8), "the body is kept verbatim", sourceLocation: sourceLocation)
    }

    /// The payload JSON of the transaction nested in a kept notification body, as signed.
    static func nestedTransactionPayload(ofBody body: [UInt8]) throws -> String {
        struct Body: Decodable { var signedPayload: String }
        struct Payload: Decodable {
            struct Block: Decodable { var signedTransactionInfo: String }
            var data: Block
        }
        struct NotBase64URL: Error {}
        func payload(_ jws: some StringProtocol) throws -> Foundation.Data {
            guard let data = Base64URL.decode(jws.split(separator: ".")[1]) else { throw NotBase64URL() }
            return data
        }
        let signedPayload = try JSONDecoder().decode(Body.self, from: Foundation.Data(body)).signedPayload
        let notification = try JSONDecoder().decode(Payload.self, from: try payload(signedPayload))
        return String(decoding: try payload(notification.data.signedTransactionInfo), as: UTF8.self)
    }
}
