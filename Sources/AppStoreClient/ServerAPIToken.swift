/// The Server API's bearer token: it names the app (`bid`) and is renewed five minutes before it
/// expires (it lives 30 minutes unless configured otherwise, 60 at most).
typealias ServerAPIToken = AppleAPIToken

extension ES256Token where Claims == AppleAPIClaims {
    convenience init(configuration: ServerAPIConfiguration) async throws {
        try await self.init(access: configuration.access, bundleId: configuration.bundleId, renewBefore: .seconds(300), name: "ServerAPIToken")
    }
}
