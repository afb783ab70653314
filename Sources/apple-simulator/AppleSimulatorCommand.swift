import AppStoreClient
import AppleSimulator
import ArgumentParser
import Foundation
import Logging

/// `apple-simulator`: our Apple-compatible verifyReceipt, Server API, App Store Connect and
/// notification server, for the demo, manual testing and benchmarks (Apple cannot be reached
/// from tests). An executable of its own, so the product `purchase-ledger` does not link it.
@main
struct AppleSimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-simulator",
        abstract: "Serve an Apple-compatible verifyReceipt endpoint, control API and notification sender.")

    @Option(help: "HOST:PORT to listen on")
    var address: String = AppleSimulatorServer.defaultAddress

    @Option(name: .customLong("root-certificate-out"), help: "Write the simulator CA's root (DER) here, for APPLE_ROOT_CERTIFICATES")
    var rootCertificatePath: String?

    func validate() throws {
        do {
            _ = try AppleSimulatorServer.parse(address: address)
        } catch {
            throw ValidationError("--address must be HOST:PORT (got \(address))")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
        try await AppleSimulatorServer.run(
            address: address,
            configuration: AppleSimulator.Configuration(environment: ProcessInfo.processInfo.environment, machineClock: .system),
            rootCertificatePath: rootCertificatePath,
            logger: Logger(label: "apple-simulator"))
    }
}
