import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Loopback TCP ports for tests that need one nobody serves.
///
/// Where the repository's servers listen on 127.0.0.1, one range per kind of server, disjoint,
/// all below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768–60999 by
/// default), from which the kernel hands ports to port-0 servers and to outgoing connections.
/// Tools/lib/ports.sh holds the same plan for the scripts.
/// - ``testServers``: servers a test stops and starts again on the same port
///   (``freeOutsideEphemeralRange()``).
/// - ``failoverSet``: the pg_auto_failover set's monitor and nodes (Tools/cluster), which the
///   failover tests kill and start again on their ports.
/// - ``toolServers``: the simulator and ledger that Tools/ starts on a port it chooses
///   (Tools/lib/api-check.sh).
///
/// Every other server a test starts binds port 0 and is handed a port in the ephemeral range.
public enum LoopbackPort {
    public static let testServers: ClosedRange<Int> = 14_000...19_999
    public static let failoverSet: ClosedRange<Int> = 20_000...29_999
    public static let toolServers: ClosedRange<Int> = 30_000...32_767

    public struct Failure: Error, CustomStringConvertible {
        public var errno: Int32
        public var description: String { "a loopback socket could not be bound (errno \(errno))" }
    }

    /// The kernel's ephemeral range overlaps the tests' own: a port drawn there could be handed
    /// to an outgoing connection while its server is stopped.
    public struct RangeOverlap: Error, CustomStringConvertible {
        public var ephemeral: ClosedRange<Int>
        public var description: String {
            "the kernel's ephemeral port range \(ephemeral.lowerBound)-\(ephemeral.upperBound) (net.ipv4.ip_local_port_range) "
                + "overlaps the tests' servers' range \(LoopbackPort.testServers.lowerBound)-\(LoopbackPort.testServers.upperBound): "
                + "set it to start above \(LoopbackPort.toolServers.upperBound) (sysctl -w net.ipv4.ip_local_port_range=\"32768 60999\")"
        }
    }

    /// The kernel's ephemeral port range; nil where /proc does not say.
    public static var ephemeralRange: ClosedRange<Int>? {
        let bounds = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) } ?? []
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return nil }
        return bounds[0]...bounds[1]
    }

    /// A port that refuses connections while `body` runs: bound but never listening, so no
    /// other test can take it meanwhile (a port freed by a stopped server could be handed out again).
    public static func refusing<T>(_ body: (Int) async throws -> T) async throws -> T {
        let (fd, port) = try bind()
        defer { close(fd) }
        return try await body(port)
    }

    /// A port nothing listens on now: bound to port 0, read, closed, for a server to take next.
    /// It is in the ephemeral range: for a server that starts at once and never restarts.
    public static func free() throws -> Int {
        let (fd, port) = try bind()
        close(fd)
        return port
    }

    /// A free port of ``testServers``, for a server that stops and starts again on the same
    /// port: in the ephemeral range, an outgoing connection or a port-0 server of another test
    /// may be handed the port while it is free. Only those few servers should use it: random
    /// picks among every test's servers would collide now and then.
    ///
    /// A port found taken is reported on standard error with what holds it (nothing else
    /// should use this range) before another is drawn. Throws ``RangeOverlap`` when the
    /// kernel's ephemeral range reaches into ``testServers``.
    public static func freeOutsideEphemeralRange() throws -> Int {
        if let ephemeral = ephemeralRange, ephemeral.overlaps(testServers) {
            throw RangeOverlap(ephemeral: ephemeral)
        }
        for _ in 0..<200 {
            let port = Int.random(in: testServers)
            do {
                let (fd, _) = try bind(port: port)
                close(fd)
                return port
            } catch let failure as Failure where failure.errno == EADDRINUSE {
                let note = "LoopbackPort: port \(port) of the tests' range \(testServers.lowerBound)-\(testServers.upperBound) is taken "
                    + "(\(PortOwners.describe(port: port))); drawing another\n"
                FileHandle.standardError.write(Data(note.utf8))
            }
        }
        throw Failure(errno: EADDRINUSE)
    }

    /// A socket bound to 127.0.0.1:`port` (0: any free port), not listening, close-on-exec (no
    /// child process may keep it), and the port it got.
    private static func bind(port: Int = 0) throws -> (Int32, Int) {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
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
