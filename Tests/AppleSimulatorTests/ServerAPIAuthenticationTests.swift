import AppStore
import AppleSimulator
import Foundation
import Testing

@Suite("the Server API checks the JWT as Apple does")
struct ServerAPIAuthenticationTests {
    @Test("a good token reads a purchase's transaction info, signed so the AppStore verifier accepts it")
    func goodToken() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
            let reply = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)", token: try await key.token())
            #expect(reply.status == 200)
            let signed = try #require(reply.json?["signedTransactionInfo"] as? String)
            #expect(try jwsPayload(signed)["transactionId"] as? String == purchase.transactionId)
            let verified = try await SignatureVerificationTests.verifier(running.simulator, environment: .sandbox)
                .verifyTransaction(signed)
            #expect(verified.payload.transactionId == purchase.transactionId)
            #expect(running.simulator.serverAPICalls(to: .transactionInfo) == 1)
        }
    }

    /// Ways a token goes wrong; each must be refused.
    enum BadToken: String, CaseIterable, Sendable {
        case signedByAnotherKey, expired, wrongAudience, wrongBundleId, wrongIssuer, wrongKeyId, wrongType,
            issuedInTheFuture, livesOverAnHour, missing, notBearer

        func authorization(_ key: ServerAPIKey) async throws -> String? {
            let token: String
            switch self {
            case .signedByAnotherKey: token = try await ServerAPIKey().token()
            case .expired: token = try await key.token(issuedAt: Date().addingTimeInterval(-7200), lifetime: 3600)
            case .wrongAudience: token = try await key.token(audience: "appstoreconnect-v2")
            case .wrongBundleId: token = try await key.token(bundleId: "com.example.other")
            case .wrongIssuer: token = try await key.token(issuer: "another-issuer")
            case .wrongKeyId: token = try await key.token(keyId: "OTHERKEY01")
            case .wrongType: token = try await key.token(type: "JOSE")
            case .issuedInTheFuture: token = try await key.token(issuedAt: Date().addingTimeInterval(600))
            case .livesOverAnHour: token = try await key.token(lifetime: 2 * 3600)
            case .missing: return nil
            case .notBearer:
                let basic = try await key.token()
                return "Basic " + basic
            }
            return "Bearer " + token
        }
    }

    @Test("a refused token answers 401 with an empty body", arguments: BadToken.allCases)
    func refused(_ bad: BadToken) async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
            let reply = try await ServerAPIHTTP.call(
                .get, "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)", token: nil,
                authorization: try await bad.authorization(key))
            #expect(reply.status == 401)
            #expect(reply.body.isEmpty)
            #expect(running.simulator.serverAPICalls(to: .transactionInfo) == 1)
        }
    }

    @Test("without a serverAPI configuration every call answers 401")
    func notConfigured() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(SimulatorHarness.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
            let reply = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)", token: try await key.token())
            #expect(reply.status == 401)
            #expect(reply.body.isEmpty)
        }
    }

    @Test("unknown and malformed transaction ids answer Apple's errors")
    func unknownTransaction() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let token = try await key.token()
            let unknown = try await ServerAPIHTTP.get("\(running.serverAPIURL)/inApps/v1/transactions/2000000999999999", token: token)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == 4_040_010)
            #expect(unknown.json?["errorMessage"] as? String == "Transaction id not found.")
            let malformed = try await ServerAPIHTTP.get("\(running.serverAPIURL)/inApps/v1/transactions/abc", token: token)
            #expect(malformed.status == 400)
            #expect(malformed.errorCode == 4_000_006)
        }
    }

    @Test("a transaction of another app is unknown to this app's key")
    func otherApp() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(
                appleId: "b", productId: "com.example.removeads", bundleId: "com.example.other")
            let reply = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)", token: try await key.token())
            #expect(reply.status == 404)
        }
    }
}
