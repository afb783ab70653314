/// The App Store Connect API's bearer token: a team key's, so no `bid`; renewed two minutes
/// before it expires (it lives 19 at most).
typealias AppStoreConnectToken = AppleAPIToken

extension ES256Token where Claims == AppleAPIClaims {
    convenience init(configuration: AppStoreConnectConfiguration) async throws {
        try await self.init(access: configuration.access, bundleId: nil, renewBefore: .seconds(120), name: "AppStoreConnectToken")
    }
}
