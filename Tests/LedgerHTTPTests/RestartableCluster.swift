import EmbeddedPostgres
import Foundation
import Synchronization
import TestSupport

/// A PostgreSQL cluster of one test, which the test may stop and start again: an
/// `EmbeddedCluster` in a folder of its own, so the cluster every other test of the process
/// uses (`DATABASE_URL`) is never touched (PoolRestartTests does the same).
final class RestartableCluster: Sendable {
    let folder: URL
    private let current: Mutex<EmbeddedCluster>
    private static let settings = ["fsync": "off"]

    private init(folder: URL, cluster: EmbeddedCluster) {
        self.folder = folder
        self.current = Mutex(cluster)
    }

    static func create() async throws -> RestartableCluster {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("purchase-ledger-outage-\(UUID().uuidString)")
        let cluster = try await EmbeddedCluster.start(in: folder, settings: settings, logger: TestDatabase.logger)
        return RestartableCluster(folder: folder, cluster: cluster)
    }

    /// Always the same socket: a stopped and started cluster answers on the conninfo it had.
    var conninfo: String { current.withLock { $0.conninfo } }

    func stop() async throws {
        try await current.withLock { $0 }.stop()
    }

    func start() async throws {
        let started = try await EmbeddedCluster.start(in: folder, settings: Self.settings, logger: TestDatabase.logger)
        current.withLock { $0 = started }
    }

    func destroy() async {
        await current.withLock { $0 }.destroy()
    }
}
