import Foundation
import Postgres
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP front for the test cluster (which listens on a Unix socket only) that passes every
/// connection through, except PostgreSQL's cancel requests: those it accepts, reads, and never
/// answers, as a host that swallows them would. Started on 127.0.0.1, a port the kernel hands
/// out; its sockets are close-on-exec.
final class SilentCancelProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let unixPath: String
    private let held = Mutex<[Int32]>([])
    private let cancels = Atomic<Int>(0)

    /// Cancel requests received (and swallowed) so far.
    var cancelRequests: Int { cancels.load(ordering: .relaxed) }

    /// A proxy to the cluster of `conninfo` (its `host` a socket folder).
    init(to conninfo: String) throws {
        let settings = Dictionary(try Conninfo.parse(conninfo), uniquingKeysWith: { _, last in last })
        guard let folder = settings["host"], folder.hasPrefix("/") else { throw ProxyError("the test cluster is not on a Unix socket") }
        unixPath = folder + "/.s.PGSQL." + (settings["port"] ?? "5432")
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw ProxyError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw ProxyError("bind/listen: \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// `conninfo` pointed at this proxy over TCP, without TLS or GSS negotiation.
    func conninfo(from conninfo: String) throws -> String {
        var text = conninfo
        for (keyword, value) in [("host", "127.0.0.1"), ("port", String(port)), ("sslmode", "disable"), ("gssencmode", "disable")] {
            text = try Conninfo.setting(keyword, to: value, in: text)
        }
        return text
    }

    /// Stops accepting and closes every connection it holds.
    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for socket in held.withLock({ $0 }) { Glibc.close(socket) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        // Every startup packet begins with its length and a code; 80877102 is CancelRequest.
        var header = [UInt8](repeating: 0, count: 8)
        guard readFully(client, &header) else { Glibc.close(client); return }
        let code = header[4...7].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if code == 80_877_102 {
            cancels.add(1, ordering: .relaxed)
            held.withLock { $0.append(client) }
            return  // read nothing more, answer nothing, close nothing
        }
        let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in unixPath.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0, write(server, header, 8) == 8 else { Glibc.close(client); Glibc.close(server); return }
        held.withLock { $0.append(contentsOf: [client, server]) }
        Thread.detachNewThread { Self.pump(from: server, to: client) }
        Self.pump(from: client, to: server)
    }

    private static func pump(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer[sent..<count].withUnsafeBytes { write(target, $0.baseAddress, count - sent) }
                guard written > 0 else { shutdown(source, Int32(SHUT_RDWR)); return }
                sent += written
            }
        }
        shutdown(target, Int32(SHUT_RDWR))
    }

    private func readFully(_ socket: Int32, _ buffer: inout [UInt8]) -> Bool {
        var got = 0
        while got < buffer.count {
            let count = buffer[got...].withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            got += count
        }
        return true
    }
}

struct ProxyError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
