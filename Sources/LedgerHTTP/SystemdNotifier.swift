#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// Tells systemd how `serve` is doing (sd_notify(3)): `READY=1` once it listens with its
/// migrations current, `STOPPING=1` when SIGTERM starts the graceful shutdown. The unit is
/// `Type=notify`, so `systemctl start` and a rolling upgrade wait for READY rather than for the
/// process to exist. Without `NOTIFY_SOCKET` (a shell, a test) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The datagram socket's path; a leading `@` names Linux's abstract namespace.
    let socketPath: String?
    let logger: Logger

    public init(environment: [String: String], logger: Logger) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        self.logger = logger
    }

    /// Sends `state` (newline-separated `KEY=VALUE` lines) in one datagram. A failure is logged,
    /// never thrown: a server that serves must not stop because its supervisor went away.
    public func notify(_ state: String) {
        guard let socketPath else { return }
        #if os(Linux)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard descriptor >= 0 else {
            logger.warning("systemd notification not sent: socket() failed", metadata: ["errno": "\(errno)"])
            return
        }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else {
            logger.warning("systemd notification not sent: NOTIFY_SOCKET is too long", metadata: ["path": "\(socketPath)"])
            return
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
        }
        // An abstract name is exactly its bytes; a path is read up to its terminating zero.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        if sent < 0 {
            logger.warning("systemd notification not sent", metadata: ["errno": "\(errno)", "state": "\(state)"])
        }
    }
}
