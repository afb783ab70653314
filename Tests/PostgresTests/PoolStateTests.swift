@testable import Postgres
import Testing

@Suite("The pool's state machine")
struct PoolStateTests {
    @Test("grows to its bound, then queues waiters first in, first out")
    func boundedFIFO() {
        var state = PoolState<String>(maxConnections: 2)
        #expect(state.acquire(id: 1, waiter: "a") == .create(slot: 0))
        #expect(state.acquire(id: 2, waiter: "b") == .create(slot: 1))
        #expect(state.acquire(id: 3, waiter: "c") == .wait)
        #expect(state.acquire(id: 4, waiter: "d") == .wait)
        #expect(state.busyCount == 2)
        guard case .handOver("c") = state.release(slot: 0) else { Issue.record("c first"); return }
        guard case .handOver("d") = state.release(slot: 1) else { Issue.record("then d"); return }
        guard case .idle = state.release(slot: 0) else { Issue.record("then idle"); return }
        #expect(state.acquire(id: 5, waiter: "e") == .use(slot: 0))
    }

    @Test("a cancelled waiter leaves the queue; closing fails the rest")
    func cancelAndClose() {
        var state = PoolState<String>(maxConnections: 1)
        _ = state.acquire(id: 1, waiter: "a")
        _ = state.acquire(id: 2, waiter: "b")
        _ = state.acquire(id: 3, waiter: "c")
        #expect(state.cancel(id: 2) == "b")
        #expect(state.cancel(id: 2) == nil)
        let (waiters, idle) = state.close()
        #expect(waiters == ["c"])
        #expect(idle.isEmpty)
        guard case .close = state.release(slot: 0) else { Issue.record("closed pool closes slots"); return }
        #expect(state.acquire(id: 4, waiter: "d") == .closed)
    }
}
