import Foundation

/// Set App Account Token, answered from the state.
extension AppleSimulator {
    /// How many Set App Account Token requests succeeded.
    public var appAccountTokensSet: Int { core.withLock { $0.state.appAccountTokensSet } }

    /// Checks the body (`{"appAccountToken": UUID}`) and sets the token; success has no body.
    func serverAPISetAppAccountToken(_ originalTransactionId: String, body: Data, bundleId: String) throws {
        let token = try Self.appAccountToken(in: body)
        try core.withLock { core in
            try core.state.setAppAccountToken(token, originalTransactionId: originalTransactionId, bundleId: bundleId)
        }
    }

    /// The body's `appAccountToken`: not JSON is 400 4000000; a token missing, not a string or
    /// not a UUID is 400 4000183.
    static func appAccountToken(in body: Data) throws -> UUID {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw ServerAPIError.generalBadRequest
        }
        guard let text = object["appAccountToken"] as? String, let token = UUID(uuidString: text) else {
            throw ServerAPIError.invalidAppAccountTokenUUID
        }
        return token
    }
}
