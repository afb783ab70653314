import Foundation

/// What holds a local TCP port, from Linux's /proc/net/tcp and tcp6: for the error when the
/// simulator cannot hold its port while refusing, so a rare EADDRINUSE says which sockets were
/// in the way (a listener, or connections in some state) instead of only its errno.
enum PortSockets {
    /// The TCP states of /proc/net/tcp's `st` column.
    static let states: [String: String] = [
        "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "06": "TIME_WAIT",
        "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
    ]

    /// "LISTEN ×1, FIN_WAIT2 ×2" for the sockets whose local port is `port`; nil where
    /// /proc/net is not readable (not Linux).
    static func describe(port: Int) -> String? {
        let tables = ["/proc/net/tcp", "/proc/net/tcp6"].compactMap(readWhole)
        guard !tables.isEmpty else { return nil }
        let wanted = String(format: "%04X", port)
        var counts: [String: Int] = [:]
        for line in tables.flatMap({ $0.split(separator: "\n").dropFirst() }) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 3, fields[1].split(separator: ":").last == Substring(wanted) else { continue }
            counts[states[String(fields[3])] ?? String(fields[3]), default: 0] += 1
        }
        return counts.isEmpty ? "no socket" : counts.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }

    /// A /proc file read until its end: they report a size of 0 and are generated a page at a
    /// time, so a read sized by the file's length can stop after the first page and miss the
    /// sockets listed after it (seen: a listening socket reported as "no socket" under load).
    static func readWhole(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var data = Data()
        while let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty { data.append(chunk) }
        return String(decoding: data, as: UTF8.self)
    }
}
