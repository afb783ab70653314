import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// CPU time spent so far, user and system, by this process and by every PostgreSQL process of
/// the machine: summed around a timed part and divided by its calls, it says what each call
/// costs in CPU on each side. On a machine whose cores are all busy, latency follows CPU, so a
/// ratio of latencies is bounded by the ratio of these.
struct CPUTime: Sendable {
    var process: Duration
    var postgres: Duration

    static func now() -> CPUTime {
        CPUTime(process: processTime(), postgres: postgresTime())
    }

    static func - (after: CPUTime, before: CPUTime) -> CPUTime {
        CPUTime(process: after.process - before.process, postgres: after.postgres - before.postgres)
    }

    private static func processTime() -> Duration {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func duration(_ time: timeval) -> Duration { .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec)) }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }

    /// utime and stime (fields 14 and 15 of /proc/PID/stat, in clock ticks) of every process
    /// named postgres: the server and each backend. A backend that exited in between is lost,
    /// so the benches keep their connections open across the timed part.
    private static func postgresTime() -> Duration {
        let ticksPerSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        guard ticksPerSecond > 0, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return .zero }
        var ticks: Int64 = 0
        for entry in entries where entry.allSatisfy(\.isNumber) {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                  stat[stat.index(after: open)..<close] == "postgres"
            else { continue }
            // Fields after the name, from field 3 (state): utime is field 14, stime field 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { continue }
            ticks += user + system
        }
        return .milliseconds(ticks * 1_000 / ticksPerSecond)
    }
}

/// A `CPUTime` taken by one task and read by another.
final class CPUMark: Sendable {
    private let taken = Mutex<CPUTime?>(nil)

    func take() { taken.withLock { $0 = CPUTime.now() } }

    /// What was taken, or now when nothing was.
    var time: CPUTime { taken.withLock { $0 } ?? CPUTime.now() }
}
