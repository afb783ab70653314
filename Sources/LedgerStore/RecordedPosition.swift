import Synchronization

/// The position a request's answer rests on, for `X-Ledger-Position` (docs/http-api.md,
/// "Reads that say what they need"): the highest position of the events the request appended.
///
/// A task-local box rather than a return value threaded through every command: all appends go
/// through `LedgerLog.append`, which notes here what it wrote, and the HTTP layer (or the
/// console) that opened the box reads it when the answer is ready. Code run without a box
/// (workers, the CLI) notes nothing.
public final class RecordedPosition: Sendable {
    private let highest = Mutex<Int64?>(nil)

    public init() {}

    /// The box the current request opened, if any.
    @TaskLocal public static var current: RecordedPosition?

    /// The highest position noted so far; nil when the request appended nothing (it was
    /// answered from events already in the log: a duplicate, an idempotent replay).
    public var position: Int64? { highest.withLock { $0 } }

    /// Notes that `position` is part of the answer.
    public func note(_ position: Int64) {
        highest.withLock { $0 = max($0 ?? position, position) }
    }

    /// Runs `body` with a fresh box, and returns its result with the position it noted.
    public static func recording<T: Sendable>(_ body: () async throws -> T) async rethrows -> (T, Int64?) {
        let box = RecordedPosition()
        let result = try await $current.withValue(box) { try await body() }
        return (result, box.position)
    }
}
