import EventStore
import Ledger
import LedgerStore

extension PurchaseService {
    /// Records the configured apps (`AppsConfigured`, stream `apps`) unless the last recorded
    /// are the same; returns what it recorded. `serve` calls it at start, before anything it
    /// records. The first record of a log that holds events recorded before events named their
    /// app names the app those belong to: the configured app, which must then be one alone (the
    /// release before served one, and nothing else says which of several it was; start once with
    /// that app, then list the others: docs/several-apps.md). Servers starting together meet on
    /// the stream's version: the one that loses reads again and finds the other's record.
    public func recordApps(metadata: RequestMetadata) async throws -> AppsConfigured? {
        try await mappingDatabaseErrors {
            let apps = configuration.apps.apps.map { ConfiguredApp(bundleId: $0.bundleId, appAppleId: $0.appAppleId) }
            for _ in 1...8 {
                let recorded = try await log.read(stream: Streams.apps)
                let latest: AppsConfigured? = if case .appsConfigured(let last)? = recorded.last?.event { last } else { nil }
                if let latest, latest.apps == apps { return nil }
                let legacy = try await recorded.isEmpty
                    ? (reads.holdsEventsWithoutApp() ? configuration.apps.first.bundleId : nil)
                    : latest?.legacyBundleId
                if recorded.isEmpty, legacy != nil, configuration.apps.isSeveral {
                    throw LedgerServiceError(
                        .invalidConfiguration,
                        "LEDGER_APPS lists \(configuration.apps.apps.count) apps, and this log was recorded before events named their app: start once with the app it was recorded for alone (APPLE_BUNDLE_ID, or LEDGER_APPS listing it), then list the others")
                }
                let configured = AppsConfigured(apps: apps, legacyBundleId: legacy)
                let version = Int64(recorded.count)
                do {
                    try await log.append(
                        [LedgerAppend(stream: Streams.apps, expectation: version == 0 ? .noStream : .exactly(version), events: [.appsConfigured(configured)])],
                        metadata: metadata)
                    return configured
                } catch EventStoreError.Code.wrongExpectedVersion {
                    continue
                }
            }
            throw LedgerServiceError(.busy, "the apps stream kept moving while serve recorded its apps; start again")
        }
    }
}
