import Dispatch
import Foundation
import Synchronization
import Logging
import Spawning

/// Where Debian's PostgreSQL server programs are (`/usr/lib/postgresql/NN/bin`, newest first).
enum ServerBinaries {
    static func locate() throws -> URL {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        let newest = versions.compactMap(Int.init).sorted().last { version in
            FileManager.default.isExecutableFile(atPath: root.appendingPathComponent("\(version)/bin/initdb").path)
        }
        guard let newest else {
            throw EmbeddedClusterError("PostgreSQL's server is not installed: run Tools/demo, or apt-get install postgresql")
        }
        return root.appendingPathComponent("\(newest)/bin")
    }
}

/// Folders the server's owner must be able to use.
enum ClusterFolder {
    /// Creates `directory` and, when we are root, hands it to the `postgres` user: the server
    /// refuses to run as root.
    static func prepare(_ directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard getuid() == 0 else { return }
        let result = try OwnerProcess.run(URL(fileURLWithPath: "/bin/chown"), ["postgres:postgres", directory.path], asOwner: false)
        guard result.exitCode == 0 else {
            throw EmbeddedClusterError("cannot hand \(directory.path) to the postgres user: \(result.output)")
        }
    }

    /// Where the cluster asked for in `requested` lives: there, unless we are root and the
    /// `postgres` user cannot reach it (a clone under root's home, or inside a `mktemp -d`
    /// folder, sits behind a 0700 folder that initdb cannot pass). Then it lives in a folder
    /// under /var/tmp named after `requested`, so the next run finds it again, and a note in
    /// `requested` says where. Loosening the caller's folders instead would be a surprise.
    static func location(for requested: URL, logger: Logger) throws -> URL {
        try prepare(requested)
        guard getuid() == 0 else { return requested }
        let probe = try OwnerProcess.run(URL(fileURLWithPath: "/usr/bin/test"), ["-w", requested.path, "-a", "-x", requested.path])
        if probe.exitCode == 0 { return requested }
        let elsewhere = URL(fileURLWithPath: "/var/tmp/purchase-ledger-\(name(of: requested))", isDirectory: true)
        try prepare(elsewhere)
        let note = "The postgres user cannot reach this folder, so the private cluster for it lives in \(elsewhere.path)\n"
        try? Data(note.utf8).write(to: requested.appendingPathComponent("CLUSTER-LOCATION.txt"))
        logger.notice(
            "the postgres user cannot reach the cluster folder; using another",
            metadata: ["requested": "\(requested.path)", "directory": "\(elsewhere.path)"])
        return elsewhere
    }

    /// The cluster folder itself when its socket path fits the 107 bytes a Unix socket path
    /// may have; otherwise a fixed folder under /tmp named after it.
    static func socketDirectory(for directory: URL) -> URL {
        if directory.path.utf8.count + "/.s.PGSQL.5432".utf8.count < 100 {
            return directory
        }
        return URL(fileURLWithPath: "/tmp/purchase-ledger-\(name(of: directory))")
    }

    /// A short, stable name for a folder path (FNV-1a, base 36).
    private static func name(of directory: URL) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in directory.path.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return String(hash, radix: 36)
    }
}

/// Where the server programs run: they block until they exit (initdb and pg_ctl take seconds),
/// so never on Swift's cooperative pool. One serial queue per cluster folder: two starts of one
/// folder must not both run initdb, but one cluster's restart must not wait behind another
/// cluster's initdb (a test's in-flight query outlived a restart queued that way under CI load).
enum ServerTools {
    private static let queues = Mutex<[String: DispatchQueue]>([:])

    static func run<T: Sendable>(
        for folder: URL, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let key = folder.standardizedFileURL.path
        let queue = queues.withLock { queues in
            if let queue = queues[key] { return queue }
            let queue = DispatchQueue(label: "purchase-ledger.embedded-postgres:\(key)")
            queues[key] = queue
            return queue
        }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// Runs a server program, as the `postgres` user when we are root.
///
/// Not Foundation's `Process`: on Linux it learns that a child exited through a pipe that the
/// child's own children inherit, and the server `pg_ctl start` leaves running holds it open
/// for ever. posix_spawn and waitpid see the exit of the program itself.
enum OwnerProcess {
    struct Result {
        var exitCode: Int32
        var output: String
    }

    static func run(_ executable: URL, _ arguments: [String], asOwner: Bool = true) throws -> Result {
        let argv: [String] =
            asOwner && getuid() == 0
            // From "/" (`env -C`): the postgres user may not be allowed into our working
            // directory, and initdb and pg_ctl complain when they cannot return to it.
            ? ["/usr/sbin/runuser", "-u", "postgres", "--", "/usr/bin/env", "-C", "/", executable.path] + arguments
            : [executable.path] + arguments
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("purchase-ledger-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours reaches the server `pg_ctl start` leaves running: the calling
        // process's sockets are not close-on-exec (SwiftNIO's), and a postmaster that inherited
        // a test server's listening socket kept that port in LISTEN after the server closed it.
        InheritedDescriptors.close(in: &actions)

        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else {
            throw EmbeddedClusterError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                throw EmbeddedClusterError("lost track of \(argv[0]): \(String(cString: strerror(errno)))")
            }
        }
        // WIFEXITED / WEXITSTATUS are macros Swift does not import.
        let exitCode: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Result(exitCode: exitCode, output: output)
    }
}
