import Foundation
import Synchronization

/// `clients` callers, each taking the next item and waiting for its answer before the next,
/// until `seconds` pass or the items run out: the flow benches' timed part.
enum ClosedLoop {
    /// How long the callers run before the clock starts. The first calls open the clients'
    /// connections, the server's pooled connections and the simulator's, and prepare each
    /// connection's statements, so they are slower than the rest and would weigh on the p99
    /// (BENCHMARKS.md, 'Why the code is shaped so'). A server that has run for a second no
    /// longer pays them, and that steady state is what the figures are about.
    static let warmUp: Duration = .milliseconds(500)

    /// Returns calls per second and the p50 and p99 latencies in milliseconds, of the calls
    /// begun after `warmUp`; needs about (seconds + 1) × rate items.
    static func run<Item: Sendable>(
        clients: Int, seconds: Double, items: [Item], call: @escaping @Sendable (Item) async throws -> Void
    ) async throws -> (rate: Double, p50: Double, p99: Double) {
        let next = Ticket()
        let start = ContinuousClock.now + warmUp
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            group.addTask {
                try await Task.sleep(until: start)
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
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))].seconds * 1_000
        }
        return (Double(sorted.count) / elapsed.seconds, percentile(0.5), percentile(0.99))
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
