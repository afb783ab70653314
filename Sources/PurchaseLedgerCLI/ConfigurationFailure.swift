import LedgerStore

/// A setting that cannot be used. `runCommandAndExit` writes it as one line on standard error
/// and exits 78 (EX_CONFIG), which the unit's `RestartPreventExitStatus=` keeps from
/// restarting in a loop.
struct ConfigurationFailure: Error, CustomStringConvertible {
    let message: String

    init(_ error: any Error) {
        message = (error as? LedgerServiceError)?.message ?? "\(error)"
    }

    init(message: String) {
        self.message = message
    }

    var description: String { "configuration error: \(message)" }
}
