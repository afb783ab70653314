import AppleSimulator
import Foundation
import JWTKit
import Testing

/// An App Store Connect API key made in the test, and JWTs signed with it as App Store Connect
/// expects them (ES256, header `kid`, claims `iss`, `aud`, `iat`, `exp`, no `bid`).
struct ConnectAPIKey: Sendable {
    static let issuerId = "69a6de7e-1a2b-47e3-e053-5b8c7c11a4d1"
    static let keyId = "ASC9KEY001"

    let privateKey = ES256PrivateKey()

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var bid: String?
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A token; every argument defaults to what the simulator accepts.
    func token(
        issuer: String = ConnectAPIKey.issuerId, keyId: String = ConnectAPIKey.keyId, bundleId: String? = nil,
        audience: String = "appstoreconnect-v1", issuedAt: Date = Date(), lifetime: TimeInterval = 600
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: privateKey)
        let claims = Claims(
            iss: IssuerClaim(value: issuer), bid: bundleId, aud: AudienceClaim(value: audience),
            iat: IssuedAtClaim(value: issuedAt), exp: ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime)))
        return try await keys.sign(claims, header: ["kid": .string(keyId), "typ": .string("JWT")])
    }

    func configuration(taxChanges: [TaxChange] = []) -> AppleSimulator.Configuration {
        var configuration = SimulatorHarness.configuration(notificationVersions: [.v2])
        configuration.connectPublicKeyPEM = privateKey.publicKey.pemRepresentation
        configuration.connectKeyId = Self.keyId
        configuration.connectIssuerId = Self.issuerId
        configuration.taxChanges = taxChanges
        return configuration
    }
}

@Suite("App Store Connect price points")
struct ConnectPricePointTests {
    static func appleId(_ productId: String) throws -> String {
        try #require(SimulatedProduct.defaultCatalog.first { $0.productId == productId }).reportAppleIdentifier
    }

    /// Every point of `url`, following `links.next`; also the pages' `included` territories.
    static func allPages(_ url: String, token: String) async throws -> (
        points: [[String: Any]], territories: [String: String], pages: Int, total: Int?
    ) {
        var next: String? = url
        var points: [[String: Any]] = []
        var territories: [String: String] = [:]
        var pages = 0
        var total: Int?
        while let url = next {
            let reply = try await ServerAPIHTTP.get(url, token: token)
            try #require(reply.status == 200)
            let json = try #require(reply.json)
            points += try #require(json["data"] as? [[String: Any]])
            for territory in json["included"] as? [[String: Any]] ?? [] {
                let attributes = territory["attributes"] as? [String: Any]
                territories[territory["id"] as? String ?? ""] = attributes?["currency"] as? String
            }
            let links = try #require(json["links"] as? [String: Any])
            #expect(links["self"] as? String == url)
            next = links["next"] as? String
            total = ((json["meta"] as? [String: Any])?["paging"] as? [String: Any])?["total"] as? Int
            pages += 1
            try #require(pages < 100)
        }
        return (points, territories, pages, total)
    }

    static func territory(_ point: [String: Any]) -> String? {
        (((point["relationships"] as? [String: Any])?["territory"] as? [String: Any])?["data"] as? [String: Any])?["id"]
            as? String
    }

    static func attributes(_ point: [String: Any]) -> [String: String] {
        point["attributes"] as? [String: String] ?? [:]
    }

    static func proceeds(_ points: [[String: Any]], territory: String, price: String) -> String? {
        points.first { Self.territory($0) == territory && attributes($0)["customerPrice"] == price }
            .flatMap { attributes($0)["proceeds"] }
    }

    @Test("a valid token reads every page by links.next: six territories, USA 0.99 pays 0.7")
    func readsAllPages() async throws {
        let key = ConnectAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let id = try Self.appleId("com.example.coins100")
            let url = "\(running.serverAPIURL)/v2/inAppPurchases/\(id)/pricePoints?include=territory&limit=5"
            let read = try await Self.allPages(url, token: try await key.token())
            #expect(read.points.count == 36)
            #expect(read.total == 36)
            #expect(read.pages == 8)
            #expect(Set(read.points.compactMap { $0["id"] as? String }).count == 36)
            #expect(read.points.allSatisfy { $0["type"] as? String == "inAppPurchasePricePoints" })
            #expect(read.points.allSatisfy { Self.attributes($0)["proceedsYear2"] == nil })
            #expect(
                read.territories
                    == ["USA": "USD", "DEU": "EUR", "FRA": "EUR", "GBR": "GBP", "JPN": "JPY", "BRA": "BRL"])
            #expect(Self.proceeds(read.points, territory: "USA", price: "0.99") == "0.7")
            #expect(Self.proceeds(read.points, territory: "USA", price: "2.99") == "2.1")
            #expect(Self.proceeds(read.points, territory: "DEU", price: "9.99") == "5.88")
            #expect(Self.proceeds(read.points, territory: "JPN", price: "160.0") == "102.0")
        }
    }

    @Test("subscriptions answer subscriptionPricePoints with proceedsYear2; the other path is 404")
    func subscriptions() async throws {
        let key = ConnectAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let id = try Self.appleId("com.example.pro.monthly")
            let token = try await key.token()
            let url = "\(running.serverAPIURL)/v1/subscriptions/\(id)/pricePoints?filter%5Bterritory%5D=USA&limit=200"
            let read = try await Self.allPages(url, token: token)
            #expect(read.pages == 1)
            #expect(read.territories.isEmpty)
            let point = try #require(read.points.first { Self.attributes($0)["customerPrice"] == "4.99" })
            #expect(point["type"] as? String == "subscriptionPricePoints")
            #expect(Self.attributes(point)["proceeds"] == "3.5")
            #expect(Self.attributes(point)["proceedsYear2"] == "4.25")
            let wrongPath = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/v2/inAppPurchases/\(id)/pricePoints", token: token)
            #expect(wrongPath.status == 404)
        }
    }

    /// Ways a token goes wrong for App Store Connect; each must be refused.
    enum BadToken: String, CaseIterable, Sendable {
        case withBundleId, wrongAudience, livesOverTwentyMinutes, signedByAnotherKey, expired, wrongKeyId, missing

        func token(_ key: ConnectAPIKey) async throws -> String? {
            switch self {
            case .withBundleId: try await key.token(bundleId: "com.example.app")
            case .wrongAudience: try await key.token(audience: "appstoreconnect-v2")
            case .livesOverTwentyMinutes: try await key.token(lifetime: 21 * 60)
            case .signedByAnotherKey: try await ConnectAPIKey().token()
            case .expired: try await key.token(issuedAt: Date().addingTimeInterval(-1200), lifetime: 600)
            case .wrongKeyId: try await key.token(keyId: "OTHERKEY01")
            case .missing: nil
            }
        }
    }

    @Test("a refused token answers 401 NOT_AUTHORIZED", arguments: BadToken.allCases)
    func refused(_ bad: BadToken) async throws {
        let key = ConnectAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let id = try Self.appleId("com.example.coins100")
            let reply = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/v2/inAppPurchases/\(id)/pricePoints", token: try await bad.token(key))
            #expect(reply.status == 401)
            let errors = try #require(reply.json?["errors"] as? [[String: Any]])
            #expect(errors.first?["code"] as? String == "NOT_AUTHORIZED")
            #expect(errors.first?["status"] as? String == "401")
        }
    }

    @Test("an unknown apple id answers 404 NOT_FOUND")
    func unknownAppleId() async throws {
        let key = ConnectAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let reply = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/v1/subscriptions/1000000001/pricePoints", token: try await key.token())
            #expect(reply.status == 404)
            let errors = try #require(reply.json?["errors"] as? [[String: Any]])
            #expect(errors.first?["code"] as? String == "NOT_FOUND")
            #expect(errors.first?["status"] as? String == "404")
        }
    }

    @Test("a limit over 200 answers 400")
    func limitTooLarge() async throws {
        let key = ConnectAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let id = try Self.appleId("com.example.coins100")
            let reply = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/v2/inAppPurchases/\(id)/pricePoints?limit=201", token: try await key.token())
            #expect(reply.status == 400)
        }
    }

    @Test("after a scheduled tax change the DEU proceeds follow the new rate")
    func taxChange() async throws {
        let key = ConnectAPIKey()
        let start = Date(timeIntervalSince1970: Double(SimulatorHarness.startMs) / 1000)
        let change = TaxChange(territory: "DEU", from: start.addingTimeInterval(10 * 86_400), ratePercent: 16)
        try await SimulatorHarness.withServer(key.configuration(taxChanges: [change])) { running in
            let id = try Self.appleId("com.example.coins100")
            let url = "\(running.serverAPIURL)/v2/inAppPurchases/\(id)/pricePoints?filter%5Bterritory%5D=DEU,USA&limit=4"
            let before = try await Self.allPages(url, token: try await key.token())
            #expect(Self.proceeds(before.points, territory: "DEU", price: "9.99") == "5.88")
            try await running.simulator.advance(days: 11)
            let after = try await Self.allPages(url, token: try await key.token())
            #expect(Self.proceeds(after.points, territory: "DEU", price: "9.99") == "6.03")
            #expect(Self.proceeds(after.points, territory: "USA", price: "0.99") == "0.7")
            #expect(after.points.count == 12)
        }
    }
}
