import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
public struct ProcessExit: Sendable, Equatable, CustomStringConvertible {
    /// The exit code, or the signal's number when `signaled` (what Foundation's
    /// `Process.terminationStatus` says).
    public var status: Int32
    public var signaled: Bool

    public init(status: Int32, signaled: Bool) {
        self.status = status
        self.signaled = signaled
    }

    /// From the status word `waitpid` fills in (WIFSIGNALED, WTERMSIG and WEXITSTATUS are
    /// macros Swift does not import).
    public init(waitStatus: Int32) {
        let signal = waitStatus & 0x7f
        if signal == 0 {
            self.init(status: (waitStatus >> 8) & 0xff, signaled: false)
        } else {
            self.init(status: signal, signaled: true)
        }
    }

    public static let success = ProcessExit(status: 0, signaled: false)

    public var description: String { signaled ? "killed by signal \(status)" : "exit \(status)" }
}

/// A program run in a process of its own: the one way the tests and the benches start
/// processes (the embedded cluster's `pg_ctl` shares its descriptor rule, `InheritedDescriptors`).
///
/// Spawned with `posix_spawn` and waited for with `waitpid` on a thread of its own, its end
/// observed without holding a thread of the cooperative pool. Not Foundation's `Process`:
/// - Foundation learns that a child ended through a socket the child inherits; a daemon the
///   child leaves behind (`Tools/cluster rejoin` starts a pg_autoctl keeper) inherits it too,
///   and the end of the child itself was never reported.
/// - Every descriptor above standard error is closed in the child, at once. The test
///   process's sockets are not close-on-exec (SwiftNIO opens its sockets without
///   SOCK_CLOEXEC), and a daemon started by a child that inherited them keeps them open after
///   the test closed them: a simulator's listening socket stayed in LISTEN in such a daemon,
///   and the simulator could not take its port back while refusing connections.
///   (Foundation closes them too, but from a list read before the spawn.)
public final class ChildProcess: Sendable {
    public enum Input: Sendable {
        /// Standard input reads /dev/null.
        case nullDevice
        /// This process's standard input.
        case inherit
    }

    public enum Output: Sendable {
        /// Standard output and standard error to /dev/null.
        case discard
        /// Both into one file (created, or emptied), in the order they are written.
        case file(URL)
        /// Each into a file of its own (created, or emptied).
        case files(standardOutput: URL, standardError: URL)
        /// Both to this process's standard error (a bench, whose standard output is its figure).
        case standardError
        /// This process's standard output and standard error.
        case inherit
    }

    public struct SpawnFailure: Error, CustomStringConvertible {
        public var command: [String]
        public var errno: Int32
        public var description: String { "could not run \(command.joined(separator: " ")): \(String(cString: strerror(errno)))" }
    }

    public let pid: pid_t
    /// The program and its arguments, for messages.
    public let command: [String]
    private let state = Mutex(State())

    private struct State {
        var exit: ProcessExit?
        var waiters: [CheckedContinuation<ProcessExit, Never>] = []
    }

    private init(pid: pid_t, command: [String]) {
        self.pid = pid
        self.command = command
    }

    /// The built product `name` (e.g. `purchase-ledger`): in the build folder, beside the test bundle.
    public static func builtProduct(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `executable` (a path; PATH is not searched) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; nil: this process's.
    ///   - newProcessGroup: the child leads a process group of its own, as Foundation's
    ///     `Process` makes it (a terminal's Ctrl-C then reaches the test runner, not the child);
    ///     false: it stays in this process's group.
    public static func start(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        input: Input = .nullDevice, output: Output = .discard, newProcessGroup: Bool = true
    ) throws -> ChildProcess {
        let command = [executable] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if case .nullDevice = input {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        let create = O_WRONLY | O_CREAT | O_TRUNC
        switch output {
        case .discard:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .file(let url):
            posix_spawn_file_actions_addopen(&actions, 1, url.path, create, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .files(let standardOutput, let standardError):
            posix_spawn_file_actions_addopen(&actions, 1, standardOutput.path, create, 0o644)
            posix_spawn_file_actions_addopen(&actions, 2, standardError.path, create, 0o644)
        case .standardError:
            posix_spawn_file_actions_adddup2(&actions, 2, 1)
        case .inherit:
            break
        }
        InheritedDescriptors.close(in: &actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if newProcessGroup {
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
        }

        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { environment in
            environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let spawned: Int32
        if let envp {
            spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        } else {
            spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard spawned == 0 else { throw SpawnFailure(command: command, errno: spawned) }

        let child = ChildProcess(pid: pid, command: command)
        let spawnedPID = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(spawnedPID, &status, 0)
            } while result == -1 && errno == EINTR
            // -1 only if something else reaped it (nothing in the tests waits for any child).
            child.ended(result == -1 ? ProcessExit(status: -1, signaled: false) : ProcessExit(waitStatus: status))
        }
        return child
    }

    /// Runs `executable ARGUMENTS` to its end; returns how it ended and what it wrote on standard
    /// output and standard error together.
    public static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        input: Input = .nullDevice, newProcessGroup: Bool = true
    ) async throws -> (exit: ProcessExit, output: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try start(
            executable, arguments, environment: environment, input: input, output: .file(file), newProcessGroup: newProcessGroup)
        let exit = await child.waitForExit()
        return (exit, String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self))
    }

    /// How it ended; nil while it runs.
    public var exit: ProcessExit? { state.withLock { $0.exit } }

    /// Waits until it ends.
    public func waitForExit() async -> ProcessExit {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> ProcessExit? in
                if let exit = state.exit { return exit }
                state.waiters.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// Waits at most `limit`, looking every 20 ms; nil when it still runs then. Throws only
    /// `CancellationError`.
    public func waitForExit(within limit: Duration) async throws -> ProcessExit? {
        let deadline = ContinuousClock.now + limit
        while true {
            if let exit { return exit }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends `signal` to the process while it runs (never to a pid that may have been reused).
    public func send(_ signal: Int32) {
        guard exit == nil else { return }
        _ = kill(pid, signal)
    }

    /// SIGTERM, then SIGKILL if it has not ended after `grace`; returns once it ended, or 5 s
    /// after the SIGKILL. Does nothing once it ended; never throws.
    public func stop(grace: Duration = .seconds(5)) async {
        guard exit == nil else { return }
        _ = kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while exit == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard exit == nil else { return }
        _ = kill(pid, SIGKILL)
        let killDeadline = ContinuousClock.now + .seconds(5)
        while exit == nil, ContinuousClock.now < killDeadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func ended(_ exit: ProcessExit) {
        let waiters = state.withLock { state -> [CheckedContinuation<ProcessExit, Never>] in
            state.exit = exit
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: exit) }
    }
}
