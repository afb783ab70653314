import AppStore
import Foundation
import Hummingbird
import Logging
import Primitives

/// App Store Connect's price points over HTTP, on the simulator's port:
/// `GET /v2/inAppPurchases/{id}/pricePoints` (consumables, non-consumables, non-renewing) and
/// `GET /v1/subscriptions/{id}/pricePoints` (auto-renewables), `{id}` being the product's Apple ID
/// (`SimulatedProduct.reportAppleIdentifier`).
///
/// Query: `include=territory` (adds `included` territories with their currency),
/// `filter[territory]=USA,DEU`, `limit` (default 50, at most 200, else 400) and `cursor` (from
/// `links.next`). Answers Apple's JSON:API shape; errors are `{"errors":[{status,code,title,detail}]}`
/// (401 `NOT_AUTHORIZED` for a refused token, 404 `NOT_FOUND` for an unknown id, 400
/// `PARAMETER_ERROR.INVALID` for a bad `limit` or `cursor`). Proceeds follow the tax rates in force
/// on the simulated clock (`Configuration.taxChanges`).
struct ConnectAPIRoutes {
    let simulator: AppleSimulator
    let logger: Logger

    static let defaultLimit = 50
    static let maximumLimit = 200

    func register(on router: Router<BasicRequestContext>) {
        router.get("v2/inAppPurchases/:appleId/pricePoints") { request, context in
            await answer(request, appleId: try context.parameters.require("appleId"), subscriptions: false)
        }
        router.get("v1/subscriptions/:appleId/pricePoints") { request, context in
            await answer(request, appleId: try context.parameters.require("appleId"), subscriptions: true)
        }
    }

    private func answer(_ request: Request, appleId: String, subscriptions: Bool) async -> Response {
        guard let verifier = simulator.connectAPIVerifier else {
            logger.debug("App Store Connect call refused: no connectPublicKeyPEM configured")
            return Self.error(.notAuthorized)
        }
        do {
            try await verifier.verify(authorization: request.headers[.authorization], now: simulator.machineNow)
        } catch {
            logger.debug("App Store Connect token refused", metadata: ["reason": "\(error)"])
            return Self.error(.notAuthorized)
        }
        let resource = subscriptions ? "subscriptions" : "inAppPurchases"
        // A product of any of the team's apps, by its Apple ID in that app.
        let settings = simulator.configuration
        let apps = settings.serverAPI.map { $0.bundleIds.union([settings.bundleId]) } ?? [settings.bundleId]
        let product = settings.products.first { product in
            (product.kind == .autoRenewable) == subscriptions
                && apps.contains { product.reportAppleIdentifier(inApp: $0, primaryApp: settings.bundleId) == appleId }
        }
        guard let product else {
            return Self.error(
                .notFound(detail: "There is no resource of type '\(resource)' with id '\(appleId)'"))
        }

        // Keys percent-decoded too (Hummingbird decodes values only): `filter%5Bterritory%5D`.
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters {
            query[String(name).removingPercentEncoding ?? String(name)] = String(value)
        }
        var limit = Self.defaultLimit
        if let text = query["limit"] {
            guard let value = Int(text), (1...Self.maximumLimit).contains(value) else {
                return Self.error(
                    .parameterInvalid(
                        detail: "'\(text)' is not a valid value for the parameter 'limit'. "
                            + "The value must be an integer between 1 and \(Self.maximumLimit).",
                        parameter: "limit"))
            }
            limit = value
        }
        var offset = 0
        if let text = query["cursor"] {
            guard let value = Self.offset(ofCursor: text) else {
                return Self.error(
                    .parameterInvalid(detail: "'\(text)' is not a valid cursor for this request.", parameter: "cursor"))
            }
            offset = value
        }
        let includeTerritories =
            query["include"].map { $0.split(separator: ",").contains("territory") } ?? false
        let territoryFilter = query["filter[territory]"].map { Set($0.split(separator: ",").map(String.init)) }

        var points = PricePoints.points(
            of: product, appleId: appleId, at: simulator.now, taxChanges: simulator.configuration.taxChanges)
        if let territoryFilter { points = points.filter { territoryFilter.contains($0.territory) } }
        let page = Array(points.dropFirst(offset).prefix(limit))
        let nextOffset = offset + page.count

        let base = Self.base(of: request)
        let selfLink = base + request.uri.description
        var next: String?
        if nextOffset < points.count {
            let kept = (request.uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("cursor=") }
            next = base + request.uri.path + "?" + (kept + ["cursor=\(Self.cursor(offset: nextOffset))"]).joined(separator: "&")
        }

        let type = subscriptions ? "subscriptionPricePoints" : "inAppPurchasePricePoints"
        var included: [ConnectAPIBody.Territory]?
        if includeTerritories {
            var seen = Set<String>()
            included = page.compactMap { point in
                seen.insert(point.territory).inserted
                    ? ConnectAPIBody.Territory(id: point.territory, attributes: .init(currency: point.currency)) : nil
            }
        }
        let body = ConnectAPIBody.PricePoints(
            data: page.map { point in
                ConnectAPIBody.PricePoint(
                    type: type, id: point.id,
                    attributes: .init(
                        customerPrice: point.customerPrice, proceeds: point.proceeds,
                        proceedsYear2: point.proceedsYear2),
                    relationships: .init(territory: .init(data: .init(id: point.territory))))
            },
            included: included, links: .init(self: selfLink, next: next),
            meta: .init(paging: .init(total: points.count, limit: limit)))
        do {
            return HTTPReplies.json(try AppleJSON.camelCaseData(body))
        } catch {
            logger.error("App Store Connect answer failed", metadata: ["error": "\(error)"])
            return Self.error(.internal)
        }
    }

    /// "http://host:port" of the request, from its authority (HTTP/1's `Host`).
    static func base(of request: Request) -> String {
        let host = request.head.authority ?? "127.0.0.1"
        return "http://\(host)"
    }

    /// The opaque `cursor` of the page starting at `offset`.
    static func cursor(offset: Int) -> String {
        Base64URL.encode(Data("o\(offset)".utf8))
    }

    static func offset(ofCursor cursor: String) -> Int? {
        guard let data = Base64URL.decode(cursor), let text = String(data: data, encoding: .utf8),
            text.hasPrefix("o"), let offset = Int(text.dropFirst()), offset >= 0
        else { return nil }
        return offset
    }

    /// Apple's error body with its status.
    static func error(_ error: ConnectAPIBody.ErrorItem) -> Response {
        let data = (try? AppleJSON.camelCaseData(ConnectAPIBody.Errors(errors: [error]))) ?? Data()
        return HTTPReplies.json(data, status: HTTPResponse.Status(code: Int(error.status) ?? 500))
    }
}

/// The JSON:API bodies of App Store Connect, keys as Apple spells them.
enum ConnectAPIBody {
    struct PricePoints: Encodable {
        var data: [PricePoint]
        var included: [Territory]?
        var links: Links
        var meta: Meta
    }

    struct PricePoint: Encodable {
        var type: String
        var id: String
        var attributes: Attributes
        var relationships: Relationships

        struct Attributes: Encodable {
            var customerPrice: String
            var proceeds: String
            var proceedsYear2: String?
        }

        struct Relationships: Encodable {
            var territory: TerritoryRelationship
        }

        struct TerritoryRelationship: Encodable {
            var data: Linkage
        }

        struct Linkage: Encodable {
            var type = "territories"
            var id: String
        }
    }

    struct Territory: Encodable {
        var type = "territories"
        var id: String
        var attributes: Attributes

        struct Attributes: Encodable {
            var currency: String
        }
    }

    struct Links: Encodable {
        var `self`: String
        var next: String?
    }

    struct Meta: Encodable {
        var paging: Paging

        struct Paging: Encodable {
            var total: Int
            var limit: Int
        }
    }

    struct Errors: Encodable {
        var errors: [ErrorItem]
    }

    struct ErrorItem: Encodable {
        var id = UUID().uuidString.lowercased()
        var status: String
        var code: String
        var title: String
        var detail: String
        var source: Source?

        struct Source: Encodable {
            var parameter: String
        }

        static let notAuthorized = ErrorItem(
            status: "401", code: "NOT_AUTHORIZED", title: "Authentication credentials are missing or invalid.",
            detail: "Provide a properly configured and signed bearer token, and make sure that it has not expired. "
                + "Learn more about Generating Tokens for API Requests https://developer.apple.com/go/?id=api-generating-tokens"
        )

        static func notFound(detail: String) -> ErrorItem {
            ErrorItem(status: "404", code: "NOT_FOUND", title: "The specified resource does not exist", detail: detail)
        }

        static func parameterInvalid(detail: String, parameter: String) -> ErrorItem {
            ErrorItem(
                status: "400", code: "PARAMETER_ERROR.INVALID", title: "A parameter has an invalid value",
                detail: detail, source: Source(parameter: parameter))
        }

        static let `internal` = ErrorItem(
            status: "500", code: "UNEXPECTED_ERROR", title: "An unexpected error occurred.",
            detail: "An unexpected error occurred on the server side.")
    }
}
