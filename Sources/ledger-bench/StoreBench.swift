import EventStore
import Foundation
import LedgerStore
import Logging
import Postgres

/// `Tools/bench store`: durable appends from 1 and 8 callers, the batch path and read-all, each
/// next to its ceiling measured in the same run on the same server (pgbench one-INSERT
/// transactions from the shell script; COPY in and out here). One event shape throughout.
enum StoreBench {
    static let payload = JSONB(#"""
        {"transaction_id": "1000000912345678", "original_transaction_id": "1000000912345678", "product_id": "com.example.coins100", "user_id": "user-1234", "quantity": 1, "price_minor": 99, "currency": "USD", "environment": "Production"}
        """#)

    /// Streams are new in every run, so a run may reuse a database.
    static let runID = UUID().uuidString.prefix(8)

    /// Prints "RATE COMMANDS_PER_BATCH MS_PER_COMMIT" for one round of `callers` appending for `seconds`.
    static func appendRate(conninfo: String, callers: Int, seconds: Double) async throws {
        let logger = Logger(label: "bench.store")
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 10, logger: logger)
        try await Migrator.ledger().migrate(pool: pool, logger: logger)
        let store = EventStore(pool: pool, logger: logger)
        let rate = try await appends(store: store, callers: callers, seconds: seconds)
        let statistics = store.groupCommitStatistics
        await pool.close()
        let commitMilliseconds = statistics.batches == 0 ? 0 : (statistics.committing / statistics.batches).seconds * 1_000
        print(String(format: "%.0f %.1f %.2f", rate, statistics.commandsPerBatch, commitMilliseconds))
    }

    /// The table. Append rates and their pgbench ceilings come from Tools/bench, which
    /// alternates short rounds of each and passes medians: the disk's fsync latency drifts
    /// within minutes here, so figures from different minutes do not compare (docs/benchmarks.md,
    /// 'Why the code is shaped so').
    static func run(
        conninfo: String, pgbench1: Double?, pgbench8: Double?, ours1: Double?, ours8: Double?, batch8: Double?,
        seconds: Double
    ) async throws {
        let logger = Logger(label: "bench.store")
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 10, logger: logger)
        try await Migrator.ledger().migrate(pool: pool, logger: logger)
        let store = EventStore(pool: pool, logger: logger)

        var one = ours1 ?? 0
        if ours1 == nil { one = try await appends(store: store, callers: 1, seconds: seconds) }
        let beforeEight = store.groupCommitStatistics
        var eight = ours8 ?? 0
        if ours8 == nil { eight = try await appends(store: store, callers: 8, seconds: seconds) }
        let afterEight = store.groupCommitStatistics
        let commandsPerBatch = batch8
            ?? Double(afterEight.commands - beforeEight.commands) / Double(max(1, afterEight.batches - beforeEight.batches))
        let batch = try await batchPath(store: store, commands: 100, eventsPerCommand: 1_000)
        let copyIn = try await copyInCeiling(pool: pool, rows: 100_000)
        let total = try await store.headPosition()
        // Reads alternate with their ceiling, three of each, and the medians are compared, so a
        // fast minute for COPY does not meet a slow one for us (docs/benchmarks.md, 'Why the code is
        // shaped so').
        var reads: [Double] = []
        var copies: [Double] = []
        for _ in 0..<3 {
            reads.append(try await readAllRate(store: store, total: total))
            copies.append(try await copyOutCeiling(pool: pool))
        }
        let readAll = reads.sorted()[1]
        let copyOut = copies.sorted()[1]
        await pool.close()

        let rows: [(String, Double, String, Double?)] = [
            ("durable appends, 1 caller", one, "pgbench 1 client, 1 INSERT/tx", pgbench1),
            ("durable appends, 8 callers", eight, "pgbench 8 clients, 1 INSERT/tx", pgbench8),
            ("batch path, 1,000-event appends", batch, "COPY in, same rows", copyIn),
            ("read all (events(after:)), median of 3", readAll, "COPY out, same rows, median of 3", copyOut),
        ]
        print("what                                  ours (events/s)   ceiling                             ceiling/s   ours/ceiling")
        for (what, ours, ceiling, ceilingRate) in rows {
            let ratio = ceilingRate.map { String(format: "%.2f×", ours / $0) } ?? "n/a"
            print(
                what.padding(toLength: 38, withPad: " ", startingAt: 0)
                    + String(format: "%15.0f", ours) + "   "
                    + ceiling.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + (ceilingRate.map { String(format: "%11.0f", $0) } ?? "        n/a") + "   " + ratio)
        }
        print(String(format: "(8 callers: %.1f appends per group commit)", commandsPerBatch))
        print("(log holds \(total) events; read-all target ≥ 0.60× COPY out; 8 callers target ≥ 1.00× pgbench 8 clients)")
    }

    /// Single-event appends, each awaited (durable) before the caller sends the next.
    /// `type`: a log the ledger will fold later (the partition bench) gets a type it does not
    /// know, kept as `.unknown`, so its rebuild is not stopped by these payloads.
    static func appends(store: EventStore, callers: Int, seconds: Double, type: String = "PurchaseDelivered") async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let count = try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    var n = 0
                    while clock.now < deadline {
                        try await store.append(
                            [NewEvent(type: type, payload: payload)], to: "bench-\(runID)-\(callers)-\(caller)-\(n)",
                            expecting: .noStream)
                        n += 1
                    }
                    return n
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(count) / (clock.now - start).seconds
    }

    static func batchPath(store: EventStore, commands: Int, eventsPerCommand: Int) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for command in 0..<commands {
            let events = (0..<eventsPerCommand).map { _ in NewEvent(type: "PurchaseDelivered", payload: payload) }
            try await store.append(events, to: "batch-\(runID)-\(command)", expecting: .noStream)
        }
        return Double(commands * eventsPerCommand) / (clock.now - start).seconds
    }

    static func readAllRate(store: EventStore, total: Int64) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var position: Int64 = 0
        var read = 0
        while true {
            let page = try await store.events(after: position, limit: 5_000)
            guard let last = page.last else { break }
            position = last.position
            read += page.count
        }
        precondition(Int64(read) == total, "read-all must return every event")
        return Double(read) / (clock.now - start).seconds
    }

    /// The same rows into a plain table of the same shape and indexes, without the triggers.
    static func copyInCeiling(pool: ConnectionPool, rows: Int) async throws -> Double {
        let text = String(decoding: payload.bytes, as: UTF8.self)
        return try await pool.withConnection { connection in
            try EventStore.createUntriggeredShape(named: "ceiling_copy", on: connection)
            let start = ContinuousClock.now
            let zero = "\\x" + String(repeating: "00", count: 32)
            _ = try connection.copyIn("""
                COPY ceiling_copy (position, stream_id, stream_version, event_id, event_type, schema_version, payload,
                                   metadata, recorded_at, previous_hash, hash) FROM STDIN
                """) { writer in
                for n in 1...rows {
                    try writer.writeRow([
                        String(n), "copy-\(n)", "1", UUID().uuidString, "PurchaseDelivered", "1", text, "{}",
                        "2026-11-21 00:00:00+00", zero, zero,
                    ])
                }
            }
            return Double(rows) / (ContinuousClock.now - start).seconds
        }
    }

    static func copyOutCeiling(pool: ConnectionPool) async throws -> Double {
        try await pool.withConnection { connection in
            let start = ContinuousClock.now
            let rows = try EventStore.copyOutWholeLog(on: connection)
            return Double(rows) / (ContinuousClock.now - start).seconds
        }
    }
}

extension StoreBench {
    /// `ledger-bench read-profile`: where read-all's time goes, on an existing log: the query
    /// alone (rows copied out of libpq), then with decoding into `RecordedEvent`, then COPY out.
    static func readProfile(conninfo: String) async throws {
        let logger = Logger(label: "bench.read")
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 2, logger: logger)
        let store = EventStore(pool: pool, logger: logger)
        let total = try await store.headPosition()
        let clock = ContinuousClock()
        var start = clock.now
        var position: Int64 = 0
        while position < total {
            let after = position
            position = try await pool.withConnection { connection in
                // The statement read-all runs, without its decoding.
                let rows = try connection.query(store.eventsStatement(after: after, limit: 5000), resultFormat: .binary)
                return try rows[rows.count - 1].decode(0)
            }
        }
        let queryOnly = Double(total) / (clock.now - start).seconds
        start = clock.now
        _ = try await readAllRate(store: store, total: total)
        let decoded = Double(total) / (clock.now - start).seconds
        let copyOut = try await copyOutCeiling(pool: pool)
        await pool.close()
        print(String(format: "query only %.0f rows/s, with decoding %.0f events/s, COPY out %.0f rows/s", queryOnly, decoded, copyOut))
    }
}
