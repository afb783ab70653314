import Foundation

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

    /// The cluster folder itself when its socket path fits the 107 bytes a Unix socket path
    /// may have; otherwise a fixed folder under /tmp named after it.
    static func socketDirectory(for directory: URL) -> URL {
        if directory.path.utf8.count + "/.s.PGSQL.5432".utf8.count < 100 {
            return directory
        }
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in directory.path.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return URL(fileURLWithPath: "/tmp/purchase-ledger-\(String(hash, radix: 36))")
    }
}

/// Runs a server program, as the `postgres` user when we are root.
enum OwnerProcess {
    struct Result {
        var exitCode: Int32
        var output: String
    }

    static func run(_ executable: URL, _ arguments: [String], asOwner: Bool = true) throws -> Result {
        let process = Process()
        if asOwner && getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        // A file, not a pipe: pg_ctl start leaves a server running that must not hold our pipe
        // open (reading it would then never reach end-of-file).
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("purchase-ledger-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let data = (try? Data(contentsOf: log)) ?? Data()
        return Result(exitCode: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
