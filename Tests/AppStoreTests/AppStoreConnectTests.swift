import Crypto
import Foundation
import Primitives
import Testing

@testable import AppStore
@testable import AppStoreClient

/// The App Store Connect API's token and price points, without a network.
@Suite("App Store Connect")
struct AppStoreConnectTests {
    static let issuerId = "69a6de7e-1a2b-47e3-e053-5b8c7c11a4d1"
    static let keyId = "ASC9KEY001"

    static func json(_ part: Substring) throws -> [String: Any] {
        let data = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("the token is ES256 with kid, iss, aud appstoreconnect-v1, no bid, exp 19 minutes after iat, signed by the key")
    func tokenClaimsAndHeader() async throws {
        let key = P256.Signing.PrivateKey()
        let configuration = AppStoreConnectConfiguration(issuerId: Self.issuerId, keyId: Self.keyId, privateKeyPEM: key.pemRepresentation)
        let token = try await AppStoreConnectToken(configuration: configuration).current(nowMs: 1_700_000_000_123)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try Self.json(parts[0])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == Self.keyId)
        let claims = try Self.json(parts[1])
        #expect(claims["iss"] as? String == Self.issuerId)
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] == nil, "a team key's token carries no bid")
        let iat = try #require((claims["iat"] as? NSNumber)?.int64Value)
        let exp = try #require((claims["exp"] as? NSNumber)?.int64Value)
        #expect(iat == 1_700_000_000)
        #expect(exp - iat <= 1200)
        #expect(exp - iat == 19 * 60)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test("a token lifetime over 20 minutes is cut to 20")
    func lifetimeCapped() {
        let configuration = AppStoreConnectConfiguration(issuerId: "i", keyId: "k", privateKeyPEM: "", tokenLifetime: .seconds(3600))
        #expect(configuration.tokenLifetime == .seconds(1200))
        #expect(configuration.baseURL == "https://api.appstoreconnect.apple.com")
        #expect(configuration.description.contains("k") && !configuration.description.contains("PRIVATE"))
    }

    @Test("configuration: all three credentials or none; the URL overridable")
    func configurationFromEnvironment() throws {
        #expect(try AppStoreConnectConfiguration.fromEnvironment([:]) == nil)
        #expect(throws: AppStoreError.self) { try AppStoreConnectConfiguration.fromEnvironment(["APPLE_CONNECT_ISSUER_ID": "i"]) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("connect-\(UUID().uuidString).p8").path
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try #require(try AppStoreConnectConfiguration.fromEnvironment([
            "APPLE_CONNECT_ISSUER_ID": "i", "APPLE_CONNECT_KEY_ID": "k", "APPLE_CONNECT_PRIVATE_KEY": path,
            "APPLE_CONNECT_API_URL": "http://127.0.0.1:9/",
        ]))
        #expect(configuration.baseURL == "http://127.0.0.1:9")
        #expect(configuration.issuerId == "i" && configuration.keyId == "k")
    }

    @Test("Apple's decimal strings are read exactly into minor units", arguments: [
        ("0.7", "USD", Int64(70)), ("160.0", "JPY", 160), ("0.99", "USD", 99), ("160", "JPY", 160), ("29.99", "EUR", 2999),
        ("5.9", "BRL", 590), ("0.990", "USD", 99), ("-1.25", "USD", -125), ("1000000.00", "USD", 100_000_000),
    ])
    func decimals(text: String, currency: String, minor: Int64) {
        #expect(DecimalMinorUnits.parse(text, currency: currency) == minor)
    }

    @Test("more decimals than the currency has, or anything but a plain decimal, is refused", arguments: [
        ("1.005", "USD"), ("160.5", "JPY"), ("", "USD"), (".", "USD"), ("1e2", "USD"), ("0,99", "EUR"), (" 1.00", "USD"),
        ("99999999999999999999", "USD"), ("1.2.3", "USD"), ("-", "USD"),
    ])
    func refused(text: String, currency: String) {
        #expect(DecimalMinorUnits.parse(text, currency: currency) == nil)
    }

    @Test("a JSON:API page reads each point's territory, the territory's currency, and its amounts; links.next is kept")
    func pageDecoding() throws {
        let body = #"""
            {"data":[
              {"type":"subscriptionPricePoints","id":"a","attributes":{"customerPrice":"0.99","proceeds":"0.7","proceedsYear2":"0.84"},
               "relationships":{"territory":{"data":{"type":"territories","id":"USA"}}}},
              {"type":"subscriptionPricePoints","id":"b","attributes":{"customerPrice":"160.0","proceeds":"102.0"},
               "relationships":{"territory":{"data":{"type":"territories","id":"JPN"}}}}],
             "included":[{"type":"territories","id":"USA","attributes":{"currency":"USD"}},{"type":"territories","id":"JPN","attributes":{"currency":"JPY"}}],
             "links":{"self":"https://api.appstoreconnect.apple.com/v1/subscriptions/1/pricePoints","next":"https://api.appstoreconnect.apple.com/v1/subscriptions/1/pricePoints?cursor=Mg"}}
            """#
        let page = try PricePointPage.decode(Array(body.utf8))
        #expect(page.points == [
            PricePoint(territory: "USA", currency: "USD", customerPriceMinor: 99, proceedsMinor: 70, proceedsYear2Minor: 84),
            PricePoint(territory: "JPN", currency: "JPY", customerPriceMinor: 160, proceedsMinor: 102),
        ])
        #expect(page.next == "https://api.appstoreconnect.apple.com/v1/subscriptions/1/pricePoints?cursor=Mg")
    }

    @Test("a page with an inexact amount or a territory without its currency is refused")
    func pageRefused() {
        let inexact = #"{"data":[{"id":"a","attributes":{"customerPrice":"0.995"},"relationships":{"territory":{"data":{"id":"USA"}}}}],"included":[{"type":"territories","id":"USA","attributes":{"currency":"USD"}}],"links":{}}"#
        #expect(throws: PricePointPage.Failure.self) { try PricePointPage.decode(Array(inexact.utf8)) }
        let noCurrency = #"{"data":[{"id":"a","attributes":{"customerPrice":"0.99"},"relationships":{"territory":{"data":{"id":"USA"}}}}],"links":{}}"#
        #expect(throws: PricePointPage.Failure.self) { try PricePointPage.decode(Array(noCurrency.utf8)) }
    }
}
