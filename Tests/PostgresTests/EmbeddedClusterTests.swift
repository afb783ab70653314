import EmbeddedPostgres
import Foundation
import Postgres
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("The private cluster")
struct EmbeddedClusterTests {
    @Test("a folder the postgres user cannot reach still gets a cluster, found again on the next start")
    func unreachableFolder() async throws {
        // Like a clone inside `mktemp -d` or root's home: a 0700 folder owned by us.
        let parent = URL(fileURLWithPath: "/tmp/purchase-ledger-private-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let requested = parent.appendingPathComponent("project/.purchase-ledger/postgres")
        let first = try await EmbeddedCluster.start(in: requested, settings: ["fsync": "off"], logger: TestDatabase.logger)
        do {
            if getuid() == 0 {
                #expect(first.directory.path != requested.path)
                #expect(first.directory.path.hasPrefix("/var/tmp/purchase-ledger-"))
                let note = try String(contentsOf: requested.appendingPathComponent("CLUSTER-LOCATION.txt"), encoding: .utf8)
                #expect(note.contains(first.directory.path))
            } else {
                #expect(first.directory.path == requested.path, "only root runs the server as another user")
            }
            _ = try await Self.withPool(first) { try $0.execute("CREATE TABLE kept (v int)") }
            try await first.stop()
            let second = try await EmbeddedCluster.start(in: requested, settings: ["fsync": "off"], logger: TestDatabase.logger)
            #expect(second.directory.path == first.directory.path)
            let kept = try await Self.withPool(second) { try $0.query("SELECT count(*) FROM pg_class WHERE relname = 'kept'").scalar(Int.self) }
            #expect(kept == 1, "the second start found the first one's data")
            await second.destroy()
        } catch {
            await first.destroy()
            try? FileManager.default.removeItem(at: parent)
            throw error
        }
        try? FileManager.default.removeItem(at: parent)
    }

    private static func withPool<T: Sendable>(_ cluster: EmbeddedCluster, _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let pool = ConnectionPool(conninfo: cluster.conninfo, maxConnections: 1, logger: TestDatabase.logger)
        let result = await Result { try await pool.withConnection(body) }
        await pool.close()
        return try result.get()
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
