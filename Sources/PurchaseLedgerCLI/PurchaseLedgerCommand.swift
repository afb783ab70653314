import ArgumentParser
import Foundation
import LedgerHTTP
import Logging

/// `purchase-ledger`: the command line of CONTRACT.md. Exit codes: 0 ok, 1 failure, 2 bad
/// usage, 3 the chain does not verify.
public struct PurchaseLedgerCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "purchase-ledger",
        abstract: "An event-sourced ledger of Apple In-App Purchases.",
        subcommands: [
            MigrateCommand.self, ServeCommand.self, CatalogCommand.self, VerifyCommand.self, DigestCommand.self, AuditCommand.self, DisputeCommand.self, ReplayCommand.self, ImportCommand.self, DemoCommand.self, AppleSimulatorCommand.self, ReconcileCommand.self, ReconcileReportsCommand.self, PricePointsCommand.self, WebhooksCommand.self, ExtendRenewalsCommand.self,
        ]
    )

    public init() {}

    /// Parses the arguments, runs the command and exits with the contract's exit codes.
    public static func runAndExit() async -> Never {
        // The provider puts the request id on every line written for a request, by any logger.
        LoggingSystem.bootstrap({ label, provider in
            var handler = StreamLogHandler.standardError(label: label, metadataProvider: provider)
            handler.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }, metadataProvider: RequestLogContext.metadataProvider)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            Foundation.exit(0)
        } catch {
            let code = exitCode(for: error)
            // ArgumentParser reports usage errors as 64 (EX_USAGE); the contract says 2.
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            if code == .success {
                FileHandle.standardOutput.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(0)
            }
            if error is ExitCode {
                Foundation.exit(code.rawValue)
            }
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            Foundation.exit(1)
        }
    }
}
