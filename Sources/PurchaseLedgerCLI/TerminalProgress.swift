import Foundation
import Synchronization

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

/// Progress of a long pass over the log with its rate and time left: rewritten in place on a
/// terminal, one plain line every five seconds otherwise (logs and CI keep a trace).
enum RateProgress {
    static func reporter(label: String, unit: String = "events") -> @Sendable (Int64, Int64) -> Void {
        let started = ContinuousClock.now
        let terminal = TerminalProgress.isTerminal
        let lastLine = Mutex(ContinuousClock.now)
        return { done, total in
            let elapsed = ContinuousClock.now - started
            let seconds = max(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, 0.001)
            let rate = Double(done) / seconds
            let left = rate > 0 ? Double(max(total - done, 0)) / rate : 0
            let line = "\(label) \(done) / \(total) \(unit), \(Int(rate)) \(unit)/s, ETA \(Int(left.rounded(.up))) s"
            if terminal {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
            } else if lastLine.withLock({ last in
                guard ContinuousClock.now - last >= .seconds(5) || done >= total else { return false }
                last = ContinuousClock.now
                return true
            }) {
                FileHandle.standardError.write(Data("\(line)\n".utf8))
            }
        }
    }
}
