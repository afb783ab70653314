import Foundation
import Synchronization

/// `clients` callers, each taking the next item and waiting for its answer before the next,
/// until `seconds` pass or the items run out: the flow benches' timed part.
enum ClosedLoop {
    /// How long the callers run before the clock starts. The first calls open the clients'
    /// connections, the server's pooled connections and the simulator's, and prepare each
    /// connection's statements, so they are slower than the rest and would weigh on the p99
    /// (docs/benchmarks.md, 'Why the code is shaped so'). A server that has run for a second no
    /// longer pays them, and that steady state is what the figures are about.
    static let warmUp: Duration = .milliseconds(500)

    /// What a run measured, of the calls begun after `warmUp`.
    struct Figures {
        var rate: Double
        var p50: Double
        var p99: Double
        /// CPU milliseconds per call, of this process and of PostgreSQL's processes, from the
        /// clock's start until the last call returned.
        var processCPU: Double
        var postgresCPU: Double
    }

    /// Returns calls per second, the p50 and p99 latencies in milliseconds and the CPU per call,
    /// of the calls begun after `warmUp`; needs about (seconds + 1) × rate items.
    static func run<Item: Sendable>(
        clients: Int, seconds: Double, items: [Item], call: @escaping @Sendable (Item) async throws -> Void
    ) async throws -> Figures {
        let next = Ticket()
        let start = ContinuousClock.now + warmUp
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        let startCPU = CPUMark()
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            group.addTask {
                try await Task.sleep(until: start)
                startCPU.take()
                // On stderr, for a profiler to start on: what comes after is the timed part.
                FileHandle.standardError.write(Data("timed receipts begin\n".utf8))
                return []
            }
            for _ in 0..<clients {
                group.addTask {
                    var mine: [Duration] = []
                    while ContinuousClock.now < deadline {
                        let index = next.take()
                        guard index < items.count else { break }
                        let began = ContinuousClock.now
                        try await call(items[index])
                        if began >= start { mine.append(ContinuousClock.now - began) }
                    }
                    return mine
                }
            }
            var all: [Duration] = []
            for try await some in group { all += some }
            return all
        }
        let elapsed = ContinuousClock.now - start
        let cpu = CPUTime.now() - startCPU.time
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))].seconds * 1_000
        }
        let calls = Double(max(sorted.count, 1))
        return Figures(
            rate: Double(sorted.count) / elapsed.seconds, p50: percentile(0.5), p99: percentile(0.99),
            processCPU: cpu.process.seconds * 1_000 / calls, postgresCPU: cpu.postgres.seconds * 1_000 / calls)
    }
}

/// Hands out 0, 1, 2, ... to concurrent clients.
final class Ticket: Sendable {
    private let next = Mutex(0)

    func take() -> Int {
        next.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
