import Logging
import Postgres

/// Every event after a position, in commit order, then each new one as it commits: an
/// `AsyncSequence` that never ends by itself (end it by cancelling the task that iterates).
/// It pulls a page at a time, so a slow consumer holds back the reading, not memory.
public struct EventSubscription: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent

    let store: EventStore
    let start: Int64
    let pageSize: Int
    let pollInterval: Duration
    let conninfo: String

    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: self)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let subscription: EventSubscription
        var position: Int64
        var buffer: [RecordedEvent] = []
        var listener: AppendListener?

        init(subscription: EventSubscription) {
            self.subscription = subscription
            self.position = subscription.start
        }

        public mutating func next() async throws -> RecordedEvent? {
            while buffer.isEmpty {
                if Task.isCancelled {
                    await listener?.close()
                    return nil
                }
                let listener = self.listener ?? AppendListener(conninfo: subscription.conninfo, logger: subscription.store.logger)
                if self.listener == nil {
                    self.listener = listener
                    try await listener.prepare()
                }
                buffer = try await subscription.store.events(after: position, limit: subscription.pageSize)
                if buffer.isEmpty {
                    try await listener.wait(timeout: subscription.pollInterval)
                }
                buffer.reverse()
            }
            let event = buffer.removeLast()
            position = event.position
            return event
        }
    }
}

extension EventStore {
    /// Tails the log from just after `position` (0: from the start). To resume a named reader,
    /// pass `try await checkpoint(named:)` and save checkpoints as events are applied.
    /// - Parameters:
    ///   - conninfo: where the subscription's own LISTEN connection goes (the store's database).
    ///   - pollInterval: how long to wait for a notification before reading anyway.
    public func subscribe(
        after position: Int64, conninfo: String, pageSize: Int = 500, pollInterval: Duration = .seconds(1)
    ) -> EventSubscription {
        EventSubscription(store: self, start: position, pageSize: max(1, pageSize), pollInterval: pollInterval, conninfo: conninfo)
    }
}
