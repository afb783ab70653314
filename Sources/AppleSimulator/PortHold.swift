import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket bound to the simulator's address but never listening: while it is held,
/// connecting there is refused at once (RST, `ECONNREFUSED`), and the kernel hands the port to
/// no other socket, neither a server binding port 0 nor a client's outgoing connection, so the
/// simulator can take it back when it accepts connections again.
///
/// `SO_REUSEADDR` lets it bind over the stopped server's connections still in TIME_WAIT, as
/// Hummingbird's listener (which sets it too) does when it comes back.
final class PortHold: Sendable {
    /// The socket; nil once released.
    private let descriptor: Mutex<CInt?>

    #if canImport(Glibc)
    private static let streamType = CInt(SOCK_STREAM.rawValue)
    #else
    private static let streamType = SOCK_STREAM
    #endif

    /// Binds a socket to `address`; throws `.portUnavailable` when another socket holds it.
    init(_ address: SocketAddress) throws {
        let fd = socket(address.protocol.rawValue, Self.streamType, 0)
        guard fd >= 0 else {
            throw SimulatorError(.portUnavailable, "no socket to hold \(address) (errno \(errno))")
        }
        var one: CInt = 1
        let reusable = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0
        let bound = reusable && address.withSockAddr { bind(fd, $0, socklen_t($1)) } == 0
        guard bound else {
            let code = errno
            _ = close(fd)
            let holders = address.port.flatMap(PortSockets.describe(port:)).map { "; sockets on the port: \($0)" } ?? ""
            throw SimulatorError(.portUnavailable, "could not hold \(address) while refusing connections (errno \(code)\(holders))")
        }
        descriptor = Mutex<CInt?>(fd)
    }

    /// Closes the socket, freeing the port; later calls do nothing.
    func release() {
        descriptor.withLock { fd in
            if let open = fd {
                _ = close(open)
                fd = nil
            }
        }
    }

    deinit {
        release()
    }
}
