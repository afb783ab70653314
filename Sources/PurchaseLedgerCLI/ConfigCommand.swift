import ArgumentParser
import Crypto
import EventStore
import Foundation
import Ledger
import LedgerHTTP
import Logging
import Postgres

/// `purchase-ledger config check`: every setting `serve` reads, where its value comes from
/// (environment, file, default) with secrets masked, then the checks `serve` would fail on
/// later, at the first of which it exits 78 naming the setting.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check the configuration serve would run with.", subcommands: [Check.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Print every setting with its source (secrets masked) and validate them; exit 78 on the first error.")

        @Option(name: .customLong("env-file"), help: "An environment file read as systemd's EnvironmentFile= (the package's /etc/purchase-ledger/ledger.env); the process environment overrides it")
        var environmentFile: String?

        func run() async throws {
            var file: [String: String] = [:]
            if let path = environmentFile {
                do {
                    file = EnvironmentFile.parse(try String(contentsOfFile: path, encoding: .utf8))
                } catch {
                    throw ConfigurationFailure(message: "--env-file: cannot read \(path)")
                }
            }
            let process = ProcessInfo.processInfo.environment
            func set(_ values: [String: String], _ name: String) -> String? { values[name].flatMap { $0.isEmpty ? nil : $0 } }
            let environment = file.merging(process) { _, fromProcess in fromProcess }
            let name = { (text: String) in text.padding(toLength: 36, withPad: " ", startingAt: 0) }
            let source = { (text: String) in text.padding(toLength: 12, withPad: " ", startingAt: 0) }
            for setting in ConfigurationSetting.all {
                if let value = set(process, setting.name) {
                    print("\(name(setting.name)) \(source("environment")) \(setting.shown(value))")
                } else if let value = set(file, setting.name) {
                    print("\(name(setting.name)) \(source("file")) \(setting.shown(value))")
                } else {
                    print("\(name(setting.name)) \(source("default")) (\(setting.defaultValue))")
                }
            }
            print("")
            try await ConfigurationChecks(environment: environment).run { print("ok  \($0)") }
            print("configuration ok")
        }
    }
}
