import AppStore
import AsyncHTTPClient
import Logging
import Primitives

/// The App Store Server API for every app a ledger serves. The In-App Purchase key is the
/// team's, so one key serves every app, but each token names one app (`bid`) and Apple answers
/// about that app's transactions only: a client per app, each with its own token, all sharing
/// one HTTP client, one key and one retry policy.
public struct ServerAPIClients: Sendable {
    /// The apps, in the order configured; the first is the one a call that names no app asks.
    public let bundleIds: [String]
    /// The first app's client.
    public let first: ServerAPIClient
    private let byApp: [String: ServerAPIClient]

    /// A client per app of `bundleIds` (the configuration's own `bundleId` when empty), each
    /// a copy of `configuration` naming its app.
    public init(
        configuration: ServerAPIConfiguration, bundleIds: [String], clock: WallClock, httpClient: HTTPClient = .shared,
        logger: Logger = Logger(label: "AppStore.ServerAPIClient"), onUnauthorized: @escaping @Sendable () -> Void = {}
    ) async throws(ServerAPIError) {
        let apps = bundleIds.isEmpty ? [configuration.bundleId] : bundleIds
        func client(of app: String) async throws(ServerAPIError) -> ServerAPIClient {
            var own = configuration
            own.bundleId = app
            return try await ServerAPIClient(configuration: own, clock: clock, httpClient: httpClient, logger: logger, onUnauthorized: onUnauthorized)
        }
        let first = try await client(of: apps[0])
        var byApp = [apps[0]: first]
        for app in apps.dropFirst() where byApp[app] == nil {
            byApp[app] = try await client(of: app)
        }
        self.bundleIds = apps
        self.first = first
        self.byApp = byApp
    }

    /// One app's client; nil for an app not configured.
    public func client(for bundleId: String) -> ServerAPIClient? { byApp[bundleId] }

    /// The client for a fact's app: `bundleId`, else (a fact recorded before events named their
    /// app) `legacyApp`, else (a log that names no app yet) the first. Nil for an app not
    /// configured.
    public func client(for bundleId: String?, legacyApp: String?) -> ServerAPIClient? {
        guard let app = bundleId ?? legacyApp else { return first }
        return byApp[app]
    }

    /// Every app's client, in the order configured.
    public var all: [ServerAPIClient] { bundleIds.compactMap { byApp[$0] } }
}
