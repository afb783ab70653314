import Foundation
import NIOCore
import ServiceLifecycle
import Synchronization

/// A simulator server started with `AppleSimulatorServer.start`: where it listens, how to stop
/// it, and how to make it refuse connections for a while (an outage of Apple's servers).
///
/// While refusing, the port stays reserved for the simulator but nothing listens, so every
/// connection (verifyReceipt and the control API alike) fails at once with `ECONNREFUSED`; drive
/// the simulator in-process meanwhile (`simulator`). Its state is untouched by the outage.
public final class RunningAppleSimulator: Sendable {
    public let simulator: AppleSimulator
    public let host: String
    /// The bound port (the real one when started on port 0); kept across refusals.
    public let port: Int
    private let server: AppleSimulatorServer
    private let state: Mutex<State>

    private enum State: Sendable {
        case serving(ServerRun)
        /// Refusing; the hold is nil only when the port could not be held.
        case refusing(PortHold?)
        /// A refuse or accept is under way (it awaits the server outside the lock).
        case changing
        case stopped
    }

    init(server: AppleSimulatorServer, host: String, run: ServerRun) {
        self.simulator = server.simulator
        self.server = server
        self.host = host
        self.port = run.port
        self.state = Mutex(.serving(run))
    }

    /// "http://HOST:PORT".
    public var baseURL: String { "http://\(host):\(port)" }
    /// For `APPLE_VERIFY_RECEIPT_PRODUCTION_URL`.
    public var productionURL: String { "\(baseURL)/production/verifyReceipt" }
    /// For `APPLE_VERIFY_RECEIPT_SANDBOX_URL`.
    public var sandboxURL: String { "\(baseURL)/sandbox/verifyReceipt" }
    /// For `APPLE_SERVER_API_URL`: the App Store Server API's paths (`/inApps/...`) are under it.
    public var serverAPIURL: String { baseURL }
    /// Where the simulator records notifications posted to itself (for tests without a ledger).
    public var notificationSinkURL: String { "\(baseURL)/control/notification-sink" }

    /// Stops serving and refuses every new connection on `port` until `acceptConnections()`.
    ///
    /// Returns once the listener is closed: requests under way finish first (graceful
    /// shutdown), idle keep-alive connections are closed. Does nothing when already refusing.
    /// Throws `.portUnavailable` when the port could not be held (connections are refused all
    /// the same, but another socket may take the port).
    public func refuseConnections() async throws {
        let current = try state.withLock { state -> ServerRun? in
            switch state {
            case .serving(let run):
                state = .changing
                return run
            case .refusing:
                return nil
            case .changing:
                throw SimulatorError(.invalidRequest, "the simulator's server is already starting or stopping")
            case .stopped:
                throw SimulatorError(.invalidRequest, "the simulator's server was stopped")
            }
        }
        guard let current else { return }
        do {
            try await current.stop()
        } catch {
            await settle(.refusing(nil))
            throw error
        }
        // Take the port at once, before anything else can be handed it.
        // The stopped server's accepted connections may hold the port for a moment after it
        // returns (EADDRINUSE): try again until a deadline rather than fail the outage test.
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                let hold = try PortHold(current.address)
                await settle(.refusing(hold))
                return
            } catch {
                if ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(20))
                    continue
                }
                await settle(.refusing(nil))
                throw error
            }
        }
    }

    /// Serves again on the same host and port, with the same simulator. Does nothing when
    /// already serving.
    public func acceptConnections() async throws {
        let refusing = try state.withLock { state -> (wasRefusing: Bool, hold: PortHold?) in
            switch state {
            case .serving:
                return (false, nil)
            case .refusing(let hold):
                state = .changing
                return (true, hold)
            case .changing:
                throw SimulatorError(.invalidRequest, "the simulator's server is already starting or stopping")
            case .stopped:
                throw SimulatorError(.invalidRequest, "the simulator's server was stopped")
            }
        }
        guard refusing.wasRefusing else { return }
        // Hand the port over only now, so the gap in which another socket could take it is the
        // time of one bind. Hummingbird binds with SO_REUSEADDR, so the old server's TIME_WAIT
        // connections do not make it fail with "address in use".
        refusing.hold?.release()
        do {
            let run = try await server.launch(host: host, port: port)
            await settle(.serving(run))
        } catch {
            await settle(.refusing(nil))
            throw error
        }
    }

    /// Shuts the server down gracefully and waits until it has (or frees the port if it was
    /// refusing). Calling it again does nothing.
    public func stop() async throws {
        let previous = state.withLock { state -> State in
            let previous = state
            state = .stopped
            return previous
        }
        switch previous {
        case .serving(let run): try await run.stop()
        case .refusing(let hold): hold?.release()
        case .changing, .stopped: break
        }
    }

    /// Records the outcome of a refuse or accept; when `stop()` ran meanwhile, undoes it instead,
    /// so a stopped simulator never keeps serving or holding its port.
    private func settle(_ outcome: State) async {
        let stoppedMeanwhile = state.withLock { state -> Bool in
            if case .stopped = state { return true }
            state = outcome
            return false
        }
        guard stoppedMeanwhile else { return }
        switch outcome {
        case .serving(let run): try? await run.stop()
        case .refusing(let hold): hold?.release()
        case .changing, .stopped: break
        }
    }
}

/// One run of the HTTP server, from its start to its graceful shutdown.
struct ServerRun: Sendable {
    let group: ServiceGroup
    let task: Task<Void, any Error>
    /// The address the listener bound (with the real port when asked for port 0).
    let address: SocketAddress
    let port: Int

    /// Shuts the server down gracefully and waits until it has.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
