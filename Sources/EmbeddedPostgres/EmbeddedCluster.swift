import Foundation
import Logging

/// A private PostgreSQL cluster in a folder of the project (`.purchase-ledger/postgres`), used
/// when no `DATABASE_URL` is given: created on first use, reused after, listening only on a
/// Unix socket of its own so it never clashes with another server.
public final class EmbeddedCluster: Sendable {
    /// Where the cluster lives: the folder asked for, or one under /var/tmp when we are root
    /// and the postgres user cannot reach that folder.
    public let directory: URL
    public let socketDirectory: URL
    /// Whether this process started the server (and so stops it); a server some other process
    /// started is used and left running.
    public let startedHere: Bool
    /// The folder `start` was asked for: the key its server programs are serialized by.
    private let requested: URL
    private let binaries: URL
    private let logger: Logger

    public var dataDirectory: URL { directory.appendingPathComponent("data") }
    public var conninfo: String {
        "host='\(socketDirectory.path)' port=5432 user=postgres dbname=postgres"
    }

    /// Creates the cluster if it does not exist and starts it if it is not running.
    ///
    /// - Parameter settings: extra server settings for this start (`-c name=value`), e.g.
    ///   `["fsync": "off"]` for a throwaway test cluster.
    public static func start(
        in directory: URL, settings: [String: String] = [:], logger: Logger
    ) async throws -> EmbeddedCluster {
        try await ServerTools.run(for: directory) {
            try startBlocking(in: directory, settings: settings, logger: logger)
        }
    }

    private static func startBlocking(in directory: URL, settings: [String: String], logger: Logger) throws -> EmbeddedCluster {
        let binaries = try ServerBinaries.locate()
        let requested = directory.standardizedFileURL
        let directory = try ClusterFolder.location(for: requested, logger: logger)
        let cluster = EmbeddedCluster(
            directory: directory, socketDirectory: ClusterFolder.socketDirectory(for: directory),
            startedHere: false, requested: requested, binaries: binaries, logger: logger)
        try ClusterFolder.prepare(cluster.socketDirectory)
        if !FileManager.default.fileExists(atPath: cluster.dataDirectory.appendingPathComponent("PG_VERSION").path) {
            logger.info("creating the private PostgreSQL cluster", metadata: ["directory": "\(directory.path)"])
            try cluster.run("initdb", ["-D", cluster.dataDirectory.path, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8"])
        }
        if try cluster.isRunning() {
            return cluster
        }
        let extra = settings.sorted { $0.key < $1.key }.map { " -c \($0.key)=\($0.value)" }.joined()
        try cluster.run("pg_ctl", [
            "-D", cluster.dataDirectory.path, "-l", directory.appendingPathComponent("server.log").path,
            "-w", "-t", "60", "-o", "-k \(cluster.socketDirectory.path) -c listen_addresses=\(extra)", "start",
        ])
        logger.info("started the private PostgreSQL cluster", metadata: ["socket": "\(cluster.socketDirectory.path)"])
        return EmbeddedCluster(
            directory: directory, socketDirectory: cluster.socketDirectory, startedHere: true,
            requested: requested, binaries: binaries, logger: logger)
    }

    private init(
        directory: URL, socketDirectory: URL, startedHere: Bool, requested: URL, binaries: URL, logger: Logger
    ) {
        self.directory = directory
        self.socketDirectory = socketDirectory
        self.startedHere = startedHere
        self.requested = requested
        self.binaries = binaries
        self.logger = logger
    }

    /// Stops the server if this process started it.
    public func stop() async throws {
        guard startedHere else { return }
        try await ServerTools.run(for: requested) {
            try self.run("pg_ctl", ["-D", self.dataDirectory.path, "-w", "-m", "fast", "stop"])
        }
        logger.info("stopped the private PostgreSQL cluster")
    }

    /// `pg_ctl restart -m fast` with the options it was started with, as an operator would;
    /// returns when the server accepts connections again.
    public func restart() async throws {
        try await ServerTools.run(for: requested) {
            try self.run("pg_ctl", ["-D", self.dataDirectory.path, "-w", "-t", "60", "-m", "fast", "restart"])
        }
    }

    /// Stops the server at once, whoever started it, and deletes the cluster's folder: for
    /// throwaway clusters. Never throws.
    public func destroy() async {
        _ = try? await ServerTools.run(for: requested) {
            try self.run("pg_ctl", ["-D", self.dataDirectory.path, "-w", "-m", "immediate", "stop"])
        }
        try? FileManager.default.removeItem(at: directory)
        if socketDirectory != directory { try? FileManager.default.removeItem(at: socketDirectory) }
    }

    private func isRunning() throws -> Bool {
        let status = try OwnerProcess.run(binaries.appendingPathComponent("pg_ctl"), ["-D", dataDirectory.path, "status"])
        return status.exitCode == 0
    }

    private func run(_ tool: String, _ arguments: [String]) throws {
        let result = try OwnerProcess.run(binaries.appendingPathComponent(tool), arguments)
        guard result.exitCode == 0 else {
            throw EmbeddedClusterError("\(tool) failed (exit \(result.exitCode)): \(result.output.suffix(2_000))")
        }
    }
}

/// Why the private cluster could not be created or started.
public struct EmbeddedClusterError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
