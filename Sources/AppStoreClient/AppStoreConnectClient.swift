import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import Primitives

/// The App Store Connect API over AsyncHTTPClient, for what the Server API does not tell:
/// Apple's price points (each territory's customer price and the proceeds Apple pays for it).
///
/// Every call goes through `AppleAPICore`, as the Server API's do: a cached ES256 team-key token
/// (`aud` `appstoreconnect-v1`, no `bid`, 19 minutes), 429's `Retry-After` honoured, full-jitter
/// backoff on 5xx, time-outs and refused connections, and 401 and 403 configuration alarms,
/// never retried. Every
/// page comes back verbatim, to be kept as evidence, beside what was decoded from it.
public final class AppStoreConnectClient: Sendable {
    public let configuration: AppStoreConnectConfiguration
    /// The machine's time: the tokens' `iat` and `exp`, which Apple checks against its own clock.
    public let clock: WallClock
    /// The exchange, the retries and the token, shared with `ServerAPIClient`.
    private let core: AppleAPICore

    public init(
        configuration: AppStoreConnectConfiguration, clock: WallClock, httpClient: HTTPClient = .shared,
        logger: Logger = Logger(label: "AppStore.AppStoreConnectClient")
    ) async throws(AppStoreConnectError) {
        self.configuration = configuration
        self.clock = clock
        let token: AppStoreConnectToken
        do {
            token = try await AppStoreConnectToken(configuration: configuration)
        } catch {
            throw AppStoreConnectError(.invalidKey, errorMessage: "APPLE_CONNECT_PRIVATE_KEY is not a P-256 private key in PEM")
        }
        self.core = AppleAPICore(
            name: "the App Store Connect API", access: configuration.access, clock: clock, token: token, httpClient: httpClient,
            logger: logger, bodyLimit: 32 << 20, alarms: [401, 403],
            alarmMessage: { code in
                "the App Store Connect API refused our key (\(code)): check APPLE_CONNECT_ISSUER_ID, APPLE_CONNECT_KEY_ID, APPLE_CONNECT_PRIVATE_KEY, the key's role and the clock"
            },
            onAlarm: {})
    }

    /// Which price-point list a product has: in-app purchases (consumables, non-consumables,
    /// non-renewing subscriptions) and auto-renewable subscriptions are apart in App Store Connect.
    public enum ProductFamily: String, Sendable, Hashable {
        /// `GET /v2/inAppPurchases/{id}/pricePoints`.
        case inApp = "in_app"
        /// `GET /v1/subscriptions/{id}/pricePoints`.
        case subscription

        func path(appleId: String) -> String {
            switch self {
            case .inApp: "/v2/inAppPurchases/\(ServerAPIClient.segment(appleId))/pricePoints"
            case .subscription: "/v1/subscriptions/\(ServerAPIClient.segment(appleId))/pricePoints"
            }
        }
    }

    /// Every price point of one product, every territory, following `links.next` until Apple
    /// gives none. Throws `AppStoreConnectError` when any page cannot be had or read: a refresh
    /// is all the pages or nothing.
    public func pricePoints(appleId: String, family: ProductFamily) async throws(AppStoreConnectError) -> PricePointPages {
        var url: String? = configuration.baseURL + family.path(appleId: appleId) + "?include=territory&limit=\(configuration.pageSize)"
        var pages: [[UInt8]] = []
        var points: [PricePoint] = []
        var seen = Set<String>()
        while let next = url {
            guard seen.insert(next).inserted else {
                throw AppStoreConnectError(.malformedAnswer, errorMessage: "links.next repeats a page already read")
            }
            let body = try await get(next)
            let page: PricePointPage
            do {
                page = try PricePointPage.decode(body)
            } catch {
                throw AppStoreConnectError(.malformedAnswer, httpStatus: 200, errorMessage: "price points page: \(error.message)")
            }
            pages.append(body)
            points += page.points
            url = page.next
            if let link = url, !link.hasPrefix(configuration.baseURL + "/") {
                // The token goes with every page: never to a host other than Apple's (or the override).
                throw AppStoreConnectError(.malformedAnswer, errorMessage: "links.next leaves \(configuration.baseURL)")
            }
        }
        return PricePointPages(pages: pages, points: points)
    }

    // MARK: - The exchange

    /// One page's body, after retries.
    private func get(_ url: String) async throws(AppStoreConnectError) -> [UInt8] {
        do {
            return try await core.exchange(.GET, url: url).last?.body ?? []
        } catch {
            throw AppStoreConnectError(error)
        }
    }

    /// The `detail` (or `title`) of a JSON:API error document's first error, for the message.
    static func firstErrorDetail(_ body: [UInt8]) -> String? {
        struct Errors: Decodable {
            struct Item: Decodable { var code: String?; var title: String?; var detail: String? }
            var errors: [Item]
        }
        guard let first = (try? JSONDecoder().decode(Errors.self, from: Data(body)))?.errors.first else { return nil }
        return [first.code, first.detail ?? first.title].compactMap { $0 }.joined(separator: ": ")
    }
}

/// Every page of one product's price points, verbatim, and the points read from them.
public struct PricePointPages: Sendable, Hashable {
    /// Each page's body exactly as Apple sent it, in order.
    public var pages: [[UInt8]]
    /// The points of every page, in Apple's order.
    public var points: [PricePoint]

    public init(pages: [[UInt8]], points: [PricePoint]) {
        self.pages = pages
        self.points = points
    }
}

/// One JSON:API page of price points with its included territories.
/// https://developer.apple.com/documentation/appstoreconnectapi/inapppurchasepricepointsresponse
struct PricePointPage {
    var points: [PricePoint]
    var next: String?

    struct Failure: Error { var message: String }

    private struct Document: Decodable {
        struct Relationship: Decodable {
            struct Linkage: Decodable { var type: String?; var id: String }
            var data: Linkage?
        }
        struct Item: Decodable {
            struct Attributes: Decodable {
                var customerPrice: String?
                var proceeds: String?
                var proceedsYear2: String?
            }
            var type: String?
            var id: String
            var attributes: Attributes?
            var relationships: [String: Relationship]?
        }
        struct Included: Decodable {
            struct Attributes: Decodable { var currency: String? }
            var type: String
            var id: String
            var attributes: Attributes?
        }
        struct Links: Decodable { var next: String? }
        var data: [Item]
        var included: [Included]?
        var links: Links?
    }

    static func decode(_ body: [UInt8]) throws(Failure) -> PricePointPage {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(body))
        } catch {
            throw Failure(message: "not a JSON:API document of price points")
        }
        var currencies: [String: String] = [:]
        for item in document.included ?? [] where item.type == "territories" {
            if let currency = item.attributes?.currency { currencies[item.id] = currency }
        }
        var points: [PricePoint] = []
        for item in document.data {
            guard let territory = item.relationships?["territory"]?.data?.id else {
                throw Failure(message: "price point \(item.id) names no territory")
            }
            guard let currency = currencies[territory], ISO4217.isCode(currency) else {
                throw Failure(message: "territory \(territory) is not included with a currency")
            }
            func minor(_ text: String?, _ field: String) throws(Failure) -> Int64? {
                guard let text else { return nil }
                guard let value = DecimalMinorUnits.parse(text, currency: currency) else {
                    throw Failure(message: "\(field) \"\(text)\" of price point \(item.id) is not an exact \(currency) amount")
                }
                return value
            }
            points.append(PricePoint(
                territory: territory, currency: currency,
                customerPriceMinor: try minor(item.attributes?.customerPrice, "customerPrice"),
                proceedsMinor: try minor(item.attributes?.proceeds, "proceeds"),
                proceedsYear2Minor: try minor(item.attributes?.proceedsYear2, "proceedsYear2")))
        }
        return PricePointPage(points: points, next: document.links?.next.flatMap { $0.isEmpty ? nil : $0 })
    }
}
