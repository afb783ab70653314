import Foundation
import NIOHTTP1
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What schemathesis and a careful reader found in the HTTP layer: methods a path does not take,
/// and requests that are not HTTP at all, answered in the API's own terms.
@Suite("HTTP precision")
struct HTTPPrecisionTests {
    @Test("a known path with a method it does not take answers 405 with Allow; an unknown path stays 404")
    func methodNotAllowed() async throws {
        try await LedgerHarness.with { ledger in
            let orders = try await ledger.request(.GET, "/v1/orders")
            #expect(orders.status == 405)
            #expect(orders.header("Allow") == "POST")
            #expect(orders.errorCode == "method_not_allowed")
            let user = try await ledger.request(.PUT, "/v1/users/u-1")
            #expect(user.status == 405)
            #expect(Set((user.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) == ["GET", "DELETE"])
            let unknown = try await ledger.request(.GET, "/v1/nothing-here")
            #expect(unknown.status == 404)
            #expect(unknown.header("Allow") == nil)
        }
    }

    @Test("a request that is not well-formed HTTP gets the JSON error and the connection closes")
    func malformedRequest() async throws {
        try await LedgerHarness.with { ledger in
            let port = try #require(URL(string: ledger.base)?.port)
            let answer = try Self.exchange(port: port, bytes: "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(80))")
            #expect(answer.contains(#""code":"invalid_request""#))
            #expect(answer.lowercased().contains("connection: close"))
        }
    }

    /// Sends `bytes` on a new TCP connection to 127.0.0.1 and reads until the server closes it.
    static func exchange(port: Int, bytes: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HarnessError("connect failed") }
        let data = Array(bytes.utf8)
        guard send(fd, data, data.count, 0) == data.count else { throw HarnessError("send failed") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
