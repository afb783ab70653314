/// The pool's bookkeeping as a pure state machine: which slots are idle, who waits, and
/// whether the pool is closed. No I/O and no locking; ``ConnectionPool`` keeps it in a `Mutex`
/// and carries out the actions it returns.
///
/// A slot is one lane of the pool (a serial queue and at most one connection); there are never
/// more than `maxConnections` slots. Waiters are served first in, first out.
struct PoolState<Waiter> {
    let maxConnections: Int
    private(set) var slotCount = 0
    /// Idle slots, most recently used last (reused first, so warm connections stay warm).
    private(set) var idle: [Int] = []
    /// Waiting callers in arrival order.
    private var waiters: [(id: UInt64, waiter: Waiter)] = []
    private var waiterHead = 0
    private(set) var isClosed = false

    init(maxConnections: Int) {
        precondition(maxConnections > 0, "a pool needs at least one connection")
        self.maxConnections = maxConnections
    }

    var waiterCount: Int { waiters.count - waiterHead }
    var busyCount: Int { slotCount - idle.count }

    enum AcquireAction: Equatable {
        /// Use this existing idle slot.
        case use(slot: Int)
        /// A new slot with this id was added; use it.
        case create(slot: Int)
        /// All slots are busy: the waiter was queued and will be handed a slot on release.
        case wait
        /// The pool is closed.
        case closed
    }

    mutating func acquire(id: UInt64, waiter: Waiter) -> AcquireAction {
        if isClosed { return .closed }
        if let slot = idle.popLast() { return .use(slot: slot) }
        if slotCount < maxConnections {
            slotCount += 1
            return .create(slot: slotCount - 1)
        }
        waiters.append((id, waiter))
        return .wait
    }

    enum ReleaseAction {
        /// Hand the slot straight to this waiter.
        case handOver(Waiter)
        /// The slot is idle again.
        case idle
        /// The pool is closed: close the slot's connection.
        case close
    }

    mutating func release(slot: Int) -> ReleaseAction {
        if isClosed { return .close }
        if waiterHead < waiters.count {
            let next = waiters[waiterHead].waiter
            waiterHead += 1
            compactWaiters()
            return .handOver(next)
        }
        idle.append(slot)
        return .idle
    }

    /// Removes a waiter that gave up (its task was cancelled); nil when it was already served.
    mutating func cancel(id: UInt64) -> Waiter? {
        guard let index = waiters[waiterHead...].firstIndex(where: { $0.id == id }) else { return nil }
        let waiter = waiters.remove(at: index).waiter
        return waiter
    }

    /// Closes the pool: returns the waiters to fail and the idle slots to close. Busy slots are
    /// closed when they are released.
    mutating func close() -> (waiters: [Waiter], idleSlots: [Int]) {
        guard !isClosed else { return ([], []) }
        isClosed = true
        let pending = waiters[waiterHead...].map(\.waiter)
        waiters.removeAll()
        waiterHead = 0
        let slots = idle
        idle.removeAll()
        return (pending, slots)
    }

    private mutating func compactWaiters() {
        if waiterHead > 64 && waiterHead * 2 > waiters.count {
            waiters.removeFirst(waiterHead)
            waiterHead = 0
        }
    }
}
