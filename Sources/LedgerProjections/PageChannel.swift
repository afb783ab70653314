/// Hands one producer's pages, in order, to several consumers that each take every page at
/// their own pace: a rebuild's reader decoding ahead, and its writer groups each applying on
/// a connection of its own, none waiting for the slowest to finish the page before starting
/// the next. At most `capacity` pages are held, so the reader waits when it gets that far
/// ahead of the slowest writer and memory stays flat however long the log.
actor PageChannel<Page: Sendable> {
    private var pages: [Page] = []
    /// The index of `pages[0]` among all pages sent.
    private var base = 0
    /// Per consumer, the index of the next page it takes.
    private var cursors: [Int]
    private let capacity: Int
    private var finished = false
    private var failure: (any Error)?
    private var sender: CheckedContinuation<Void, any Error>?
    private var waiting: [Int: CheckedContinuation<Page?, any Error>] = [:]

    init(consumers: Int, capacity: Int) {
        cursors = Array(repeating: 0, count: consumers)
        self.capacity = max(capacity, 1)
    }

    /// Adds the next page; waits while `capacity` pages are held.
    func send(_ page: Page) async throws {
        while pages.count >= capacity, failure == nil {
            try await withCheckedThrowingContinuation { sender = $0 }
        }
        if let failure { throw failure }
        pages.append(page)
        let index = base + pages.count - 1
        for (consumer, continuation) in waiting where cursors[consumer] == index {
            waiting[consumer] = nil
            cursors[consumer] += 1
            continuation.resume(returning: page)
        }
        release()
    }

    /// The next page for `consumer`, or nil once every page sent before `finish()` was taken.
    func next(_ consumer: Int) async throws -> Page? {
        if let failure { throw failure }
        let index = cursors[consumer]
        if index < base + pages.count {
            cursors[consumer] += 1
            let page = pages[index - base]
            release()
            return page
        }
        if finished { return nil }
        return try await withCheckedThrowingContinuation { waiting[consumer] = $0 }
    }

    /// No more pages: consumers get nil after the last.
    func finish() {
        finished = true
        for continuation in waiting.values { continuation.resume(returning: nil) }
        waiting = [:]
    }

    /// Ends the hand-over for everyone (a writer or the reader failed): waiting and later calls throw `error`.
    func fail(_ error: any Error) {
        guard failure == nil else { return }
        failure = error
        for continuation in waiting.values { continuation.resume(throwing: error) }
        waiting = [:]
        sender?.resume(throwing: error)
        sender = nil
    }

    /// Drops the pages every consumer has taken, and lets the sender go on if there is room.
    private func release() {
        let lowest = cursors.min() ?? base
        if lowest > base {
            pages.removeFirst(lowest - base)
            base = lowest
        }
        if pages.count < capacity, let sender {
            self.sender = nil
            sender.resume()
        }
    }
}
