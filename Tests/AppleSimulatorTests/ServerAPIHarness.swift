import AppleSimulator
import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore

/// An App Store Connect API key made in the test, and JWTs signed with it the way Apple's
/// library signs them (ES256, header `kid` and `typ`, claims `iss`, `bid`, `aud`, `iat`, `exp`).
struct ServerAPIKey: Sendable {
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyId = "2X9R4HXF34"
    static let bundleId = "com.example.app"
    static let audience = "appstoreconnect-v1"

    let privateKey = ES256PrivateKey()

    /// What the simulator is told to accept: this key's public half and the constants above.
    var authentication: ServerAPIAuthentication {
        ServerAPIAuthentication(
            publicKeyPEM: privateKey.publicKey.pemRepresentation, issuerId: Self.issuerId, keyId: Self.keyId,
            bundleId: Self.bundleId)
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var bid: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A token; every argument defaults to what the simulator accepts.
    func token(
        issuer: String = ServerAPIKey.issuerId, keyId: String = ServerAPIKey.keyId,
        bundleId: String = ServerAPIKey.bundleId, audience: String = ServerAPIKey.audience,
        type: String = "JWT", issuedAt: Date = Date(), lifetime: TimeInterval = 300
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: privateKey)
        let claims = Claims(
            iss: IssuerClaim(value: issuer), bid: bundleId, aud: AudienceClaim(value: audience),
            iat: IssuedAtClaim(value: issuedAt), exp: ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime)))
        return try await keys.sign(claims, header: ["kid": .string(keyId), "typ": .string(type)])
    }

    /// A simulator configuration (v2 notifications only) that accepts this key's tokens.
    func configuration() -> AppleSimulator.Configuration {
        var configuration = SimulatorHarness.configuration(notificationVersions: [.v2])
        configuration.serverAPI = authentication
        return configuration
    }
}

/// HTTP against the simulator's Server API, with the `Authorization` header and the answer's
/// `Retry-After`.
enum ServerAPIHTTP {
    enum Method {
        case get, post, put
    }

    struct Reply {
        var status: Int
        var body: Data
        var retryAfter: String?

        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }
        var errorCode: Int64? { int64(json?["errorCode"]) }
        var signedTransactions: [String] { json?["signedTransactions"] as? [String] ?? [] }
        /// The `transactionId` inside each of `signedTransactions`, in order.
        func transactionIds() throws -> [String] {
            try signedTransactions.map { try jwsPayload($0)["transactionId"] as? String ?? "" }
        }
    }

    /// The time-out is for "no answer at all": a full parallel run beside a browser and a
    /// failover set once took over 10 s to answer a test notification. Time-out tests pass theirs.
    static func call(
        _ method: Method, _ url: String, token: String?, authorization: String? = nil, json: Any? = nil,
        body: Data? = nil, timeout: TimeAmount = .seconds(60)
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        switch method {
        case .get: request.method = .GET
        case .post: request.method = .POST
        case .put: request.method = .PUT
        }
        // `authorization` is sent as given (for malformed headers); `token` as a Bearer token.
        if let value = authorization ?? token.map({ "Bearer \($0)" }) {
            request.headers.add(name: "Authorization", value: value)
        }
        var bytes = body
        if bytes == nil, let json { bytes = try JSONSerialization.data(withJSONObject: json) }
        if let bytes {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: Array(bytes)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return Reply(
            status: Int(response.status.code), body: Data(buffer.readableBytesView),
            retryAfter: response.headers.first(name: "Retry-After"))
    }

    static func get(_ url: String, token: String?) async throws -> Reply {
        try await call(.get, url, token: token)
    }
}
