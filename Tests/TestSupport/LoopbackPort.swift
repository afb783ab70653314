import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Loopback TCP ports for tests that need one nobody serves.
public enum LoopbackPort {
    public struct Failure: Error, CustomStringConvertible {
        public var errno: Int32
        public var description: String { "a loopback socket could not be bound (errno \(errno))" }
    }

    /// A port that refuses connections while `body` runs: bound but never listening, so no
    /// other test can take it meanwhile (a port freed by a stopped server could be handed out again).
    public static func refusing<T>(_ body: (Int) async throws -> T) async throws -> T {
        let (fd, port) = try bind()
        defer { close(fd) }
        return try await body(port)
    }

    /// A port nothing listens on now: bound to port 0, read, closed, for a server to take next.
    public static func free() throws -> Int {
        let (fd, port) = try bind()
        close(fd)
        return port
    }

    /// A free port below the kernel's ephemeral range, for a server that stops and starts again
    /// on the same port: in the ephemeral range, an outgoing connection or a port-0 server of
    /// another test may be handed the port while it is free. Only those few servers should
    /// use it: random picks among every test's servers would collide now and then.
    public static func freeOutsideEphemeralRange() throws -> Int {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) } ?? []
        let low = max(range.first ?? 32_768, 12_000)
        for _ in 0..<200 {
            let port = Int.random(in: 10_000..<low)
            if let (fd, _) = try? bind(port: port) {
                close(fd)
                return port
            }
        }
        throw Failure(errno: EADDRINUSE)
    }

    private static func bind(port: Int = 0) throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                #else
                Darwin.bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                #endif
            }
        }
        guard bound else {
            let failure = Failure(errno: errno)
            close(fd)
            throw failure
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
