import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which sockets use a local TCP port now, and which processes hold them, from Linux's /proc:
/// for a test that finds a port taken, so its failure names what took it (a listener of another
/// server, a daemon that inherited one of this process's sockets, a connection) instead of
/// only an errno.
public enum PortOwners {
    public struct Socket: Sendable, Equatable {
        /// "LISTEN", "ESTABLISHED", "TIME_WAIT", ...
        public var state: String
        public var local: String
        public var remote: String
        /// 0 for a socket no descriptor holds any more (TIME_WAIT, or an orphan being closed).
        public var inode: Int
    }

    /// One line per socket on `port`: its state, addresses and holders, e.g.
    /// "LISTEN 127.0.0.1:15123 ← 0.0.0.0:0, held by pid 4242 (postgres -D /tmp/…)".
    /// "no socket" when there is none; "unknown (no /proc/net/tcp)" off Linux.
    public static func describe(port: Int) -> String {
        guard FileManager.default.isReadableFile(atPath: "/proc/net/tcp") else { return "unknown (no /proc/net/tcp)" }
        let found = sockets(onLocalPort: port)
        guard !found.isEmpty else { return "no socket" }
        let holders = holders(of: Set(found.map(\.inode).filter { $0 != 0 }))
        return found.map { socket in
            let who: String
            if socket.inode == 0 {
                who = "held by no process"
            } else if let names = holders[socket.inode], !names.isEmpty {
                who = "held by " + names.joined(separator: " and ")
            } else {
                who = "holder not found (inode \(socket.inode))"
            }
            return "\(socket.state) \(socket.local) ← \(socket.remote), \(who)"
        }.joined(separator: "; ")
    }

    /// The TCP sockets (IPv4 and IPv6) whose local port is `port`.
    public static func sockets(onLocalPort port: Int) -> [Socket] {
        let wanted = String(format: "%04X", port)
        var found: [Socket] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = readWhole(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[1].split(separator: ":").last == Substring(wanted) else { continue }
                found.append(
                    Socket(
                        state: states[String(fields[3])] ?? String(fields[3]), local: address(fields[1]), remote: address(fields[2]),
                        inode: Int(fields[9]) ?? 0))
            }
        }
        return found
    }

    /// For each inode, "pid N (command line)" of every process with a descriptor on it
    /// ("this test process" for this one).
    static func holders(of inodes: Set<Int>) -> [Int: [String]] {
        guard !inodes.isEmpty else { return [:] }
        let me = getpid()
        var holders: [Int: [String]] = [:]
        let processes = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
        for pid in processes {
            let folder = "/proc/\(pid)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            var held: Set<Int> = []
            for descriptor in descriptors {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(descriptor)"),
                    target.hasPrefix("socket:["), let inode = Int(target.dropFirst(8).dropLast()), inodes.contains(inode)
                else { continue }
                held.insert(inode)
            }
            guard !held.isEmpty else { continue }
            let name = pid == me ? "this test process (pid \(pid))" : "pid \(pid) (\(commandLine(of: pid)))"
            for inode in held { holders[inode, default: []].append(name) }
        }
        return holders
    }

    static func commandLine(of pid: Int32) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return "?" }
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        let line = words.joined(separator: " ")
        return line.count > 160 ? String(line.prefix(160)) + "…" : line
    }

    /// "127.0.0.1:15123" for /proc/net/tcp's "0100007F:3B13"; IPv6 addresses stay in hex.
    static func address(_ field: Substring) -> String {
        let parts = field.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1], radix: 16) else { return String(field) }
        guard parts[0].count == 8, let word = UInt32(parts[0], radix: 16) else { return "[\(parts[0])]:\(port)" }
        // The address as the kernel stores it, in the machine's (little-endian) byte order.
        let bytes = [word & 0xff, (word >> 8) & 0xff, (word >> 16) & 0xff, word >> 24]
        return bytes.map(String.init).joined(separator: ".") + ":\(port)"
    }

    /// The TCP states of /proc/net/tcp's `st` column.
    static let states: [String: String] = [
        "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "06": "TIME_WAIT",
        "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
    ]

    /// A /proc file read to its end (they report a size of 0 and are generated a page at a time).
    static func readWhole(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var data = Data()
        while let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty { data.append(chunk) }
        return String(decoding: data, as: UTF8.self)
    }
}
