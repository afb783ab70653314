import Foundation
import Spawning
import Testing

/// A PostgreSQL archiving its WAL to a pgBackRest repository, made and driven by `Tools/backup`
/// (Tools/lib/backup.sh): real `pgbackrest` backups, restores to a time or the latest, and the
/// loss of the data folder, for the restore drill.
struct BackupSet: Sendable {
    let folder: String
    /// The server's conninfo (a Unix socket in the set's folder; the same after a restore).
    let databaseURL: String

    static let environment = ProcessInfo.processInfo.environment

    /// Under CI the drill must run (Tools/test installs pgBackRest): a missing `pgbackrest` then
    /// fails it. By hand without pgBackRest, the suite is disabled and says how to run it.
    static var required: ConditionTrait {
        .enabled("needs Debian's pgbackrest (Tools/test installs it)") {
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/pgbackrest") { return true }
            let ci = (environment["CI"] ?? "").lowercased()
            return !ci.isEmpty && !["0", "false", "no"].contains(ci)
        }
    }

    /// The repository's root, where `Tools/backup` is.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// What a `Tools/backup` command printed, and its `export NAME='value'` lines.
    struct Run: Sendable {
        var exit: ProcessExit
        var output: String
        var exports: [String: String] {
            var found: [String: String] = [:]
            for line in output.split(separator: "\n") {
                if let match = line.wholeMatch(of: /export ([A-Z_0-9]+)='([^']*)'/) { found[String(match.1)] = String(match.2) }
            }
            return found
        }
    }

    /// Runs `Tools/backup ARGUMENTS` (in this process's group: the server it starts must not be
    /// killed with a test's process group) and returns how it ended and what it said.
    static func tool(_ arguments: [String]) async throws -> Run {
        let script = root.appendingPathComponent("Tools/backup").path
        let (exit, output) = try await ChildProcess.run(script, arguments, newProcessGroup: false)
        return Run(exit: exit, output: output)
    }

    /// Runs a command on this set; fails unless it exits 0.
    @discardableResult
    func run(_ arguments: String...) async throws -> Run {
        let command = [arguments[0], folder] + arguments.dropFirst()
        let run = try await Self.tool(command)
        guard run.exit == .success else {
            throw BackupSetError("Tools/backup \(command.joined(separator: " ")) ended with \(run.exit):\n\(run.output)")
        }
        return run
    }

    /// Starts a set with `settings` (postgresql.conf lines such as `archive_timeout=1`), runs
    /// `body` with it, and removes it whatever happens.
    static func with<T>(_ settings: [String], _ body: (BackupSet) async throws -> T) async throws -> T {
        let up = try await tool(["up"] + settings)
        guard up.exit == .success, let folder = up.exports["PL_BACKUP_DIR"], let url = up.exports["DATABASE_URL"] else {
            throw BackupSetError("Tools/backup up ended with \(up.exit):\n\(up.output)")
        }
        let set = BackupSet(folder: folder, databaseURL: url)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(set))
        } catch {
            result = .failure(error)
        }
        _ = try? await tool(["down", folder])
        return try result.get()
    }
}

struct BackupSetError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
