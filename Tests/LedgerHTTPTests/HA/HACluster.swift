import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Postgres
import TestSupport
import Testing
import Spawning

/// Every suite on the pg_auto_failover set, run one after another. The failover test kills the
/// set's servers: a standby read running beside it met the killed node as a 503 (CI, 2026-11-27),
/// so no two suites share the set at once, whatever the order they run in.
@Suite("the pg_auto_failover set", HACluster.required, .serialized)
enum HASet {
    @Suite("failover of the PostgreSQL primary") struct FailoverTests {}
    @Suite("reads on a standby") struct ReadReplicaTests {}
}

/// The pg_auto_failover set `Tools/test` starts with `Tools/cluster up` (a monitor, a primary and
/// a synchronous secondary on loopback) and names in `PL_HA_DATABASE_URL` (both hosts,
/// `target_session_attrs=read-write`) and `PL_HA_DATABASE_READ_URL` (the standby side). The tests
/// kill and bring back its servers through `Tools/cluster`.
enum HACluster {
    static let environment = ProcessInfo.processInfo.environment
    static var writeURL: String? { environment["PL_HA_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 } }
    static var readURL: String? { environment["PL_HA_DATABASE_READ_URL"].flatMap { $0.isEmpty ? nil : $0 } }

    /// Under CI the set must be there (Tools/test starts it): its absence fails the suite. By
    /// hand without it, the suite is disabled and says how to run it.
    static var required: ConditionTrait {
        .enabled("needs Tools/cluster up and PL_HA_DATABASE_URL (Tools/test sets both)") {
            if writeURL != nil { return true }
            let ci = (environment["CI"] ?? "").lowercased()
            return !ci.isEmpty && !["0", "false", "no"].contains(ci)
        }
    }

    static func requireURLs() throws -> (write: String, read: String) {
        guard let write = writeURL, let read = readURL else {
            throw HAClusterError("PL_HA_DATABASE_URL and PL_HA_DATABASE_READ_URL are not set: run the tests through Tools/test, which starts Tools/cluster")
        }
        return (write, read)
    }

    /// The repository's root, where `Tools/cluster` is.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `Tools/cluster ARGUMENTS` and returns its output; fails on a non-zero exit.
    ///
    /// Through `ChildProcess`, in this process's group as before: `rejoin` leaves a keeper
    /// daemon running, which must inherit none of this process's sockets (it kept a test
    /// server's listening socket open after the server closed it), and whose holding on to
    /// inherited descriptors must not hide the end of `Tools/cluster` itself.
    @discardableResult
    static func run(_ arguments: String...) async throws -> String {
        let script = root.appendingPathComponent("Tools/cluster").path
        let (exit, output) = try await ChildProcess.run(script, arguments, newProcessGroup: false)
        guard exit == .success else {
            throw HAClusterError("Tools/cluster \(arguments.joined(separator: " ")) ended with \(exit):\n\(output)")
        }
        return output
    }

    /// Runs `body` with a fresh schema on the set (through the multi-host URLs), dropped after.
    static func withSchema<T>(_ body: (_ conninfo: String, _ readConninfo: String) async throws -> T) async throws -> T {
        let (write, read) = try requireURLs()
        let schema = "ha_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        let admin = ConnectionPool(conninfo: write, maxConnections: 1, logger: TestDatabase.logger)
        try await admin.withConnection { try $0.execute("CREATE SCHEMA \(identifier: String(schema))") }
        let conninfo = try Conninfo.addingOptions("-c search_path=\(schema)", to: write)
        let readConninfo = try Conninfo.addingOptions("-c search_path=\(schema)", to: read)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(conninfo, readConninfo))
        } catch {
            result = .failure(error)
        }
        _ = try? await admin.withConnection { try $0.execute("DROP SCHEMA \(identifier: String(schema)) CASCADE") }
        await admin.close()
        return try result.get()
    }
}

struct HAClusterError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
