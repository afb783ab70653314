import Foundation

/// Progress of long work on standard error, only when it is a terminal (logs and pipes stay
/// clean).
enum TerminalProgress {
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// A callback printing "label done / total" over itself, or nil when not on a terminal.
    static func reporter(label: String) -> (@Sendable (Int64, Int64) -> Void)? {
        guard isTerminal else { return nil }
        return { done, total in
            let percent = total > 0 ? done * 100 / total : 100
            FileHandle.standardError.write(Data("\r\(label) \(done) / \(total) events (\(percent)%)".utf8))
        }
    }

    static func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
