import AppStore
import AppStoreClient
@testable import AppleSimulator
import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An outage of Apple's servers: the simulator refuses connections on its port, then accepts them
/// again on the same port with its state intact.
@Suite("the simulator refuses connections for outage tests")
struct ConnectionRefusalTests {
    /// `errno` of a plain TCP connect to 127.0.0.1:`port`; 0 when it connected.
    static func connectErrno(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0 ? 0 : errno
    }

    @Test("refused, a connection fails at once; accepted again, the same port answers as before")
    func refuseThenAccept() async throws {
        let port = try LoopbackPort.freeOutsideEphemeralRange()
        try await Self.reportingPortTaken(port) { try await refuseThenAccept(port: port) }
    }

    /// Runs `body`; a `.portUnavailable` from it is recorded as an issue that names what holds
    /// `port` now. Never played again on another port: the port is the tests' own (see
    /// `LoopbackPort.testServers`), so a socket in the way is a bug to find. One was: a daemon
    /// spawned by another test inherited the simulator's listening socket and kept it in LISTEN.
    static func reportingPortTaken(_ port: Int, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as SimulatorError where error.code == .portUnavailable {
            Issue.record("\(error)\nsockets on port \(port) now: \(PortOwners.describe(port: port))")
        }
    }

    func refuseThenAccept(port: Int) async throws {
        try await SimulatorHarness.withServer(port: port) { running in
            let receipt = try await VerifyReceiptClientOverHTTPTests.productionReceipt(running.simulator)
            #expect(try await SimulatorHarness.client(running).verify(receiptData: receipt).verdict == .valid)

            try await running.refuseConnections()
            try await running.refuseConnections()  // already refusing: nothing to do
            #expect(
                Self.connectErrno(port: running.port) == ECONNREFUSED,
                "a socket still listens on the port: \(PortOwners.describe(port: running.port))")

            // The verifyReceipt client over a pool that does not retry refused connections (the
            // shared client would retry until its time-out): a connection failure, at once.
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.retryConnectionEstablishment = false
            let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            do {
                let client = VerifyReceiptClient(
                    configuration: VerifyReceiptConfiguration(
                        // A time-out far beyond what a loaded machine needs: "at once" is then told
                        // from "after the time-out" without racing the clock.
                        productionURL: running.productionURL, sandboxURL: running.sandboxURL, timeout: .seconds(60)),
                    clock: .system, transport: HTTPVerifyReceiptTransport(httpClient: httpClient))
                let clock = ContinuousClock()
                let began = clock.now
                let refused = try await client.verify(receiptData: receipt)
                #expect(clock.now - began < .seconds(20))
                #expect(refused.verdict.kind == .retryLater)
                #expect(refused.verdict.error?.code == .connectionFailed)
                #expect(refused.attempts.count == 1)
                #expect(refused.attempts.first?.httpStatus == nil)

                // Meanwhile the simulator itself goes on: the clock and purchases work in-process.
                try await running.simulator.advance(days: 1)
                let later = try await running.simulator.purchase(
                    appleId: "after", productId: "com.example.removeads", environment: .production)

                try await running.acceptConnections()
                try await running.acceptConnections()  // already accepting: nothing to do
                #expect(Self.connectErrno(port: running.port) == 0)
                let answered = try await client.verify(receiptData: later.receiptData)
                #expect(answered.verdict == .valid)
                #expect(answered.response?.receipt?.inApp.map(\.transactionID) == [later.transactionId])
                #expect(try await SimulatorHarness.client(running).verify(receiptData: receipt).verdict == .valid)
                #expect(running.simulator.verifyReceiptCalls == [.production: 3])
            } catch {
                try? await httpClient.shutdown()
                throw error
            }
            try await httpClient.shutdown()
        }
    }

    @Test("a simulator stopped while refusing frees its port and cannot serve again")
    func stopWhileRefusing() async throws {
        let port = try LoopbackPort.freeOutsideEphemeralRange()
        try await Self.reportingPortTaken(port) { try await stopWhileRefusing(port: port) }
    }

    func stopWhileRefusing(port: Int) async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let running = try await AppleSimulatorServer(simulator: simulator).start(host: "127.0.0.1", port: port)
        try await running.refuseConnections()
        try await running.stop()
        try await running.stop()  // stopping twice is harmless
        await #expect(throws: SimulatorError.self) { try await running.acceptConnections() }
        await #expect(throws: SimulatorError.self) { try await running.refuseConnections() }
    }

    @Test("the sockets in the way of holding a port are named by their state")
    func socketsOnAPort() throws {
        // The port is the kernel's pick: once closed, a server another test starts at that
        // moment may be given it (a fresh-clone CI run saw "LISTEN ×1" there). So a port taken
        // again is tried afresh, a few times; a describe that cannot tell the states fails each.
        var afterClose: [String?] = []
        for _ in 0..<5 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #expect(fd >= 0)
            var open = true
            defer { if open { close(fd) } }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            #expect(listening)
            let port = Int(UInt16(bigEndian: address.sin_port))
            #expect(PortSockets.describe(port: port) == "LISTEN ×1")
            close(fd)
            open = false
            afterClose.append(PortSockets.describe(port: port))
            if afterClose.last == "no socket" { break }
        }
        #expect(afterClose.last == "no socket", "after each close: \(afterClose)")
    }
}
