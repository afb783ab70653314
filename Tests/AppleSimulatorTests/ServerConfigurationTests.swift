import AppStore
import AppleSimulator
import Foundation
import Testing

@Suite("starting the simulator from the command line's inputs")
struct ServerConfigurationTests {
    @Test("HOST:PORT parses; anything else is refused", arguments: [
        ("127.0.0.1:8090", "127.0.0.1", 8090), ("localhost:0", "localhost", 0), ("[::1]:9000", "[::1]", 9000),
    ])
    func address(text: String, host: String, port: Int) throws {
        let parsed = try AppleSimulatorServer.parse(address: text)
        #expect(parsed.host == host)
        #expect(parsed.port == port)
    }

    @Test("malformed addresses are refused", arguments: ["8090", ":8090", "host:", "host:70000", "host:port"])
    func badAddress(text: String) {
        #expect(throws: SimulatorError.self) { try AppleSimulatorServer.parse(address: text) }
    }

    @Test("the ledger's own variables configure the simulator")
    func environment() {
        let configuration = AppleSimulator.Configuration(environment: [
            "APPLE_BUNDLE_ID": "com.acme.game", "APPLE_SHARED_SECRET": "abc",
            "APPLE_SIMULATOR_NOTIFICATION_URL": "http://127.0.0.1:8080/v1/notifications/apple",
            "APPLE_SIMULATOR_NOTIFICATION_VERSIONS": "v1, v2", "APPLE_SIMULATOR_SEED": "99",
        ], machineClock: .fixed(0))
        #expect(configuration.bundleId == "com.acme.game")
        #expect(configuration.sharedSecret == "abc")
        #expect(configuration.notificationURL == "http://127.0.0.1:8080/v1/notifications/apple")
        #expect(configuration.notificationVersions == [.v1, .v2])
        #expect(configuration.seed == 99)
        let defaults = AppleSimulator.Configuration(environment: [:], machineClock: .fixed(0))
        #expect(defaults.sharedSecret == nil)
        #expect(defaults.notificationVersions == [.v2])
    }
}
