import Dispatch
import Postgres
import TestSupport
import Testing

@Suite("The connection pool")
struct PoolTests {
    @Test("N+1 concurrent users wait; never more than N connections at once")
    func bounded() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let bound = 3
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: bound, logger: TestDatabase.logger)
            let gauge = ConcurrencyGauge()
            let pids = try await withThrowingTaskGroup(of: Int32.self) { group in
                for _ in 0..<(bound * 3 + 1) {
                    group.addTask {
                        try await pool.withConnection { connection in
                            gauge.enter()
                            defer { gauge.leave() }
                            try connection.execute("SELECT pg_sleep(0.05)")
                            return connection.backendPID
                        }
                    }
                }
                return try await group.reduce(into: Set<Int32>()) { $0.insert($1) }
            }
            let serverSessions = try await TestDatabase.withAdmin { admin in
                try admin.query("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(\(PostgresArray(Array(pids)))::int[])").scalar(Int.self)
            }
            await pool.close()
            // At most `bound` at once; how close the peak comes depends on scheduling (the
            // waiting itself is checked deterministically below).
            #expect(gauge.peak <= bound)
            #expect(pids.count <= bound)
            #expect(serverSessions == pids.count)
        }
    }

    @Test("with every connection held, one more user waits until one is released")
    func extraUserWaits() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let bound = 2
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: bound, logger: TestDatabase.logger)
            let gate = DispatchSemaphore(value: 0)
            let gauge = ConcurrencyGauge()
            let holders = (0..<bound).map { _ in
                Task {
                    try await pool.withConnection { _ in
                        gauge.enter()
                        defer { gauge.leave() }
                        gate.wait()  // blocks the connection's own thread, never the cooperative pool
                    }
                }
            }
            // Connecting takes a while on a loaded machine: polled until a generous deadline.
            let deadline = ContinuousClock.now + .seconds(30)
            while gauge.peak < bound, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(gauge.peak == bound, "both connections are held")
            let extra = Task { try await pool.withConnection { _ in gauge.enter(); gauge.leave() } }
            // Until it is queued, the check below would prove nothing: wait for the queue.
            while pool.waitingCount == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(pool.waitingCount == 1, "the extra user waits in the pool's queue")
            #expect(gauge.peak == bound, "the extra user has not got a connection while all are held")
            #expect(pool.leasedCount == bound)
            for _ in 0..<bound { gate.signal() }
            for holder in holders { try await holder.value }
            try await extra.value
            await pool.close()
            #expect(gauge.peak == bound)
        }
    }

    @Test("a connection killed by the server is replaced on next use")
    func replacesDeadConnection() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            let first = try await pool.withConnection { $0.backendPID }
            // Terminated from another session while idle: noticed before the next use. The wait
            // returns once the backend has exited, which a busy machine may take a while to do.
            _ = try await TestDatabase.withAdmin { try $0.query("SELECT pg_terminate_backend(\(first), 60000)") }
            let second = try await pool.withConnection { $0.backendPID }
            #expect(second != first)
            // Terminated during use: a typed connection error, then a fresh connection.
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try $0.query("SELECT pg_terminate_backend(pg_backend_pid())") }
            }
            #expect(error?.isConnectionError == true)
            let third = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()").scalar(Int32.self) }
            #expect(third != second)
            await pool.close()
        }
    }

    @Test("a waiter whose task is cancelled gives up with CancellationError")
    func cancelledWaiter() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            let gate = DispatchSemaphore(value: 0)
            let holding = BackendLatch()
            let holder = Task {
                try await pool.withConnection { connection in
                    holding.record(connection)
                    gate.wait()  // holds the only connection until the waiter's fate is known
                }
            }
            for _ in 0..<3_000 where holding.pid == nil { try await Task.sleep(for: .milliseconds(10)) }
            #expect(holding.pid != nil, "the holder has the only connection")
            let waiter = Task { try await pool.withConnection { $0.backendPID } }
            // Cancelled once it is queued, so the test proves a queued waiter gives up.
            for _ in 0..<3_000 where pool.waitingCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(pool.waitingCount == 1, "the waiter is queued")
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            gate.signal()
            _ = try await holder.value
            #expect(try await pool.scalar("SELECT 1", as: Int.self) == 1)
            await pool.close()
        }
    }

    @Test("cancelling the task cancels the statement it is running")
    func cancelRunningStatement() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            // Only the cancel can end the statement early with 57014.
            let (sleeper, _) = try await sleepingStatement(on: pool, seconds: 30)
            let clock = ContinuousClock()
            let started = clock.now
            sleeper.cancel()
            var cancelled = false
            do {
                _ = try await sleeper.value
            } catch SQLState.queryCanceled {
                cancelled = true
            }
            #expect(cancelled)
            // Before the statement's own 30 s, with room for a loaded machine: the suite's start,
            // hundreds of tests migrating their schemas at once, once took 13 s to resume this
            // task after the cancel had gone out (CI, 2026-11-27).
            #expect(started.duration(to: clock.now) < .seconds(25))
            let one = try await pool.scalar("SELECT 1", as: Int.self)
            #expect(one == 1)
            await pool.close()
        }
    }

    @Test("a closed pool refuses work")
    func closed() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            _ = try await pool.scalar("SELECT 1", as: Int.self)
            await pool.close()
            let error = await #expect(throws: PostgresError.self) { try await pool.withConnection { $0.backendPID } }
            #expect(error?.code == .poolClosed)
        }
    }
}

/// A cancel request that cannot reach its server (a host that accepts it and never answers)
/// gives up at the pool's cancel deadline: the task ends, the connection is closed instead of
/// reused, and later cancels are not held behind it.
@Suite("A cancel with a deadline")
struct CancelDeadlineTests {
    @Test("a cancel swallowed by the network ends the statement's task at the deadline, closes that connection, and holds up no other cancel")
    func swallowedCancel() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let proxy = try SilentCancelProxy(to: conninfo)
            defer { proxy.close() }
            let pool = ConnectionPool(
                conninfo: try proxy.conninfo(from: conninfo), maxConnections: 1, cancelDeadline: .seconds(2), logger: TestDatabase.logger)
            // A backend notices its client is gone only when it next talks to it, or at the
            // check interval while a statement runs (PostgreSQL's own; off by default).
            let (sleeper, running) = try await sleepingStatement(on: pool, seconds: 60, clientCheck: "100ms")
            let stuckPID = try #require(running.pid)
            let clock = ContinuousClock()
            let started = clock.now
            sleeper.cancel()
            var serverCancelled = false
            var failure: (any Error)?
            do {
                try await sleeper.value
            } catch SQLState.queryCanceled {
                serverCancelled = true
            } catch {
                failure = error
            }
            let took = started.duration(to: clock.now)
            // Not cancelled by the server (the request never arrived): the connection was shut.
            #expect(!serverCancelled, "the server never saw the cancel")
            #expect(failure?.isPostgresConnectionError == true, "\(String(describing: failure))")
            #expect(proxy.cancelRequests == 1)
            // The deadline (2 s), with room for a loaded machine; far from the statement's 60 s.
            #expect(took >= .seconds(1.9))
            #expect(took < .seconds(20))
            // The pool goes on with a new connection; the old backend is gone (its statement
            // ended once it saw its client had closed).
            let pid = try await pool.withConnection { $0.backendPID }
            #expect(pid != stuckPID)
            let deadline = clock.now + .seconds(30)
            var ended = false
            while !ended, clock.now < deadline {
                ended = try await TestDatabase.withAdmin { connection in
                    try connection.query("SELECT count(*) FROM pg_stat_activity WHERE pid = \(stuckPID)").scalar(Int.self) == 0
                }
                if !ended { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(ended, "the abandoned backend has ended")

            // A cancel sent straight to the server right after is not held behind the swallowed one.
            let direct = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            let (second, _) = try await sleepingStatement(on: direct, seconds: 60)
            let secondStarted = clock.now
            second.cancel()
            var cancelled = false
            do { _ = try await second.value } catch SQLState.queryCanceled { cancelled = true }
            #expect(cancelled)
            #expect(secondStarted.duration(to: clock.now) < .seconds(15))
            await direct.close()
            await pool.close()
        }
    }
}
