import Foundation

/// A PostgreSQL cluster of the test's own, in a fresh temporary folder, listening only on a Unix
/// socket there. The restart test restarts this one, so no other test ever sees a restart.
struct ThrowawayCluster {
    let directory: URL
    let binaries: String
    let port = 54_329  // only names the socket file in `directory`, so it cannot clash

    var dataDirectory: String { directory.appendingPathComponent("data").path }
    var conninfo: String { "host=\(directory.path) port=\(port) user=postgres dbname=postgres" }

    struct CommandFailed: Error, CustomStringConvertible {
        var command: String
        var status: Int32
        var output: String
        var description: String { "\(command) exited with \(status): \(output)" }
    }

    /// Creates and starts a cluster (initdb + pg_ctl start).
    static func start() async throws -> ThrowawayCluster {
        let binaries = try serverBinaries()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("purchase-ledger-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path.path)
        let cluster = ThrowawayCluster(directory: path, binaries: binaries)
        do {
            if getuid() == 0 { try await run("/bin/chown", ["postgres:", path.path]) }
            try await cluster.asOwner("initdb", ["-D", cluster.dataDirectory, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "-N"])
            try await cluster.asOwner("pg_ctl", cluster.pgCtlArguments + ["start"])
        } catch {
            await cluster.remove()
            throw error
        }
        return cluster
    }

    /// `pg_ctl restart -m fast`, as an operator would; waits until it accepts connections.
    func restart() async throws {
        try await asOwner("pg_ctl", ["-D", dataDirectory, "-w", "-t", "60", "-m", "fast", "restart"])
    }

    /// Stops the server and deletes the folder; never throws.
    func remove() async {
        _ = try? await asOwner("pg_ctl", ["-D", dataDirectory, "-w", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    private var pgCtlArguments: [String] {
        [
            "-D", dataDirectory, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60",
            "-o", "-k \(directory.path) -c listen_addresses= -p \(port) -c fsync=off",
        ]
    }

    private func asOwner(_ tool: String, _ arguments: [String]) async throws {
        let executable = binaries + "/" + tool
        if getuid() == 0 {
            try await Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
        } else {
            try await Self.run(executable, arguments)
        }
    }

    /// LEDGER_TEST_PGBIN, or the newest /usr/lib/postgresql/*/bin.
    private static func serverBinaries() throws -> String {
        if let bin = ProcessInfo.processInfo.environment["LEDGER_TEST_PGBIN"], !bin.isEmpty { return bin }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw CommandFailed(command: "find PostgreSQL server binaries", status: -1, output: "set LEDGER_TEST_PGBIN or run Tools/test")
        }
        return "\(root)/\(newest)/bin"
    }

    /// Runs a program and waits for it on a thread of its own (not a cooperative one).
    ///
    /// `posix_spawn` + `waitpid` rather than Foundation's `Process`: on Linux, `Process` learns
    /// of the exit through a descriptor the child inherits, and the server that `pg_ctl start`
    /// leaves running inherits it too, so the exit would never be seen. Output goes to
    /// `commands.log` in the cluster folder's parent temporary directory.
    private static func run(_ executable: String, _ arguments: [String]) async throws {
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "ThrowawayCluster.run").async {
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
                let argv = ([executable] + arguments).map { strdup($0) } + [nil]
                defer { argv.forEach { free($0) } }
                var pid: pid_t = 0
                let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
                guard spawned == 0 else {
                    continuation.resume(throwing: CommandFailed(command: executable, status: spawned, output: "posix_spawn failed"))
                    return
                }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        guard status == 0 else {
            throw CommandFailed(command: ([executable] + arguments).joined(separator: " "), status: status, output: "see the server.log in the cluster folder")
        }
    }
}
