import ArgumentParser
import Foundation
import LedgerHTTP
import Logging

/// `purchase-ledger`: the command line of docs/cli.md. Exit codes: 0 ok, 1 failure, 2 bad
/// usage, 3 the chain does not verify, 4 the log ends before a digest, 78 a configuration error.
/// It links neither the Apple simulator nor the benches: those are executables of their own.
public struct PurchaseLedgerCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "purchase-ledger",
        abstract: "An event-sourced ledger of Apple In-App Purchases.",
        version: "purchase-ledger \(BuildInfo.version) (\(BuildInfo.commit))",
        subcommands: [
            MigrateCommand.self, ServeCommand.self, ConfigCommand.self, CatalogCommand.self, VerifyCommand.self, DigestCommand.self, AuditCommand.self, DisputeCommand.self, ReplayCommand.self, ImportCommand.self, ReconcileCommand.self, ReconcileReportsCommand.self, PricePointsCommand.self, WebhooksCommand.self, ExtendRenewalsCommand.self, EraseUserCommand.self, ErasureCommand.self, ReportCommand.self,
        ]
    )

    public init() {}

    /// Parses the arguments, runs the command and exits with the contract's exit codes.
    public static func runAndExit() async -> Never {
        await runCommandAndExit(Self.self)
    }
}

/// Parses the arguments as `Root`'s, runs the command and exits with the contract's exit codes:
/// the one mapping of errors to exits for `purchase-ledger` and the development executables.
package func runCommandAndExit<Root: ParsableCommand>(_ root: Root.Type) async -> Never {
    // The provider puts the request id on every line written for a request, by any logger.
    LoggingSystem.bootstrap({ label, provider in
        var handler = StreamLogHandler.standardError(label: label, metadataProvider: provider)
        handler.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        return handler
    }, metadataProvider: RequestLogContext.metadataProvider)
    do {
        var command = try Root.parseAsRoot()
        if var asyncCommand = command as? AsyncParsableCommand {
            try await asyncCommand.run()
        } else {
            try command.run()
        }
        Foundation.exit(0)
    } catch {
        let code = Root.exitCode(for: error)
        // ArgumentParser reports usage errors as 64 (EX_USAGE); the contract says 2.
        if code == .validationFailure {
            FileHandle.standardError.write(Data((Root.fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
        // --help and --version.
        if code == .success {
            FileHandle.standardOutput.write(Data((Root.fullMessage(for: error) + "\n").utf8))
            Foundation.exit(0)
        }
        if let failure = error as? ConfigurationFailure {
            FileHandle.standardError.write(Data((failure.description + "\n").utf8))
            Foundation.exit(78)
        }
        if error is ExitCode {
            Foundation.exit(code.rawValue)
        }
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        Foundation.exit(1)
    }
}
