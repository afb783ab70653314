import Foundation
import Synchronization

/// Progress of long work on standard error, with its rate and time left: rewritten in place on
/// a terminal; otherwise, for work long enough to want a trace in logs and CI, one plain line
/// every five seconds and at the end, and for quick checks nothing (pipes stay clean).
enum TerminalProgress {
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// On a terminal only (`verify`, `digest`, a read command catching the projections up).
    static func reporter(label: String, unit: String = "events") -> (@Sendable (Int64, Int64) -> Void)? {
        isTerminal ? rateReporter(label: label, unit: unit) : nil
    }

    /// On a terminal, or as plain lines (`replay`, `import`).
    static func rateReporter(label: String, unit: String = "events") -> @Sendable (Int64, Int64) -> Void {
        let started = ContinuousClock.now
        let terminal = isTerminal
        let lastLine = Mutex(ContinuousClock.now)
        // The rate counts from the first figure reported: a resumed rebuild starts far from zero.
        let first = Mutex<Int64?>(nil)
        return { done, total in
            let elapsed = ContinuousClock.now - started
            let seconds = max(elapsed.seconds, 0.001)
            let base = first.withLock { first in
                if first == nil { first = done }
                return first ?? 0
            }
            let rate = Double(done - base) / seconds
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

    static func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
