import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Unix datagram socket standing in for systemd's `NOTIFY_SOCKET`, for the tests and benches
/// that start `serve` as the unit does: what a `Type=notify`
/// service sends (`READY=1`, `STOPPING=1`) is read from it as systemd would.
public final class NotifySocket: @unchecked Sendable {
    // Safe to share: `descriptor` is written once in init and closed once in deinit; reads go
    // through recv, which the kernel serializes.
    public let path: String
    private let descriptor: Int32

    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw NotifySocketError(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            throw NotifySocketError(description: "bind(\(path)) failed: errno \(errno)")
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Every datagram received so far and not yet read, in order.
    public func received() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            messages.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        return messages
    }
}

public struct NotifySocketError: Error, CustomStringConvertible {
    public let description: String
}
