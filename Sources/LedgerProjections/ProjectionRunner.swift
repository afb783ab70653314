import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
import Postgres
import Synchronization

/// Keeps the read models up to date: follows the log in commit order and applies each page of
/// events to every projection in one transaction, together with the projections' checkpoints,
/// so a crash between rows and checkpoint cannot double-count.
///
/// Several runners (one per server process) may run against one database: each page takes a
/// transaction-level advisory lock and re-reads the checkpoints under it, so an event is applied
/// once. A projection whose version changed is emptied and rebuilt from the first event.
public final class ProjectionRunner: Sendable {
    /// The log it follows.
    public let store: EventStore
    let conninfo: String
    let projections: [any Projection]
    /// The projections split into groups, each applied to a page on a connection and in a
    /// transaction of its own, at the same time as the others (one group unless told).
    let groups: [[any Projection]]
    let pageSize: Int
    let logger: Logger
    /// A rebuild's runner, on tables not keyed yet: rows of tables that only grow go by COPY.
    let copyingRows: Bool
    private let state = Mutex<State>(State())

    struct State {
        var applied: Int64 = -1
        /// Reads waiting for `applied` to reach a position, resumed by `advance(to:)` (true) or
        /// by their time-out (false): a read waits on the runner's progress, never on a timer.
        var waiters: [UInt64: (position: Int64, urgent: Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter: UInt64 = 0
        /// The runner gathering appends between passes (`gather(for:)`), woken early by a read.
        var gathering: CheckedContinuation<Void, Never>?
        /// When a read last waited for the projections.
        var lastRead: ContinuousClock.Instant?
    }

    /// How long the runner lets appends gather after a page that was not full, when no read
    /// has waited for it lately: each pass costs some twenty statements whatever its size, and
    /// under load back-to-back passes carried two or three receipts each (docs/benchmarks.md,
    /// 2026-11-28, night). A read that waits ends the gathering at once; and while reads keep
    /// coming (one in the last `readsLately`) the runner does not gather at all, since a
    /// larger page is a longer pass for the next read to wait through (+2 ms at p50 measured).
    let gatherWait: Duration
    static let readsLately: Duration = .milliseconds(200)

    public convenience init(
        store: EventStore, conninfo: String, projections: [any Projection] = Projections.all, pageSize: Int = 500,
        gatherWait: Duration = .milliseconds(5), logger: Logger
    ) {
        self.init(store: store, conninfo: conninfo, groups: [projections], pageSize: pageSize, gatherWait: gatherWait, logger: logger)
    }

    /// A runner whose `groups` of projections write each page concurrently, on connections of
    /// their own (the store's pool needs one per group, and one to read the next page with).
    /// Each group's transaction locks that group only: such a runner must be the only one on
    /// its schema (a rebuild's shadow schema), since a runner of all projections would not
    /// wait for it.
    init(
        store: EventStore, conninfo: String, groups: [[any Projection]], pageSize: Int, copyingRows: Bool = false,
        gatherWait: Duration = .zero, logger: Logger
    ) {
        self.store = store
        self.gatherWait = gatherWait
        self.conninfo = conninfo
        self.projections = groups.flatMap { $0 }
        self.groups = groups.filter { !$0.isEmpty }
        self.pageSize = pageSize
        self.copyingRows = copyingRows
        self.logger = logger
    }

    /// The incremental chain check the runner keeps moving along with the projections.
    public var chain: ChainWatch { ChainWatch(pool: store.pool, logger: logger) }

    /// Reads waiting for this runner now (`waitUntilApplied`), as the pool's `waitingCount`:
    /// for tests that must know a read waits before they let the runner go on.
    public var waitingReads: Int { state.withLock { $0.waiters.values.count { $0.urgent } } }

    /// The names of the projections it applies, as `projection_checkpoints` holds them.
    public var projectionNames: [String] { projections.map(\.name) }

    /// The position every projection has applied, as last seen by this runner (-1 before its first pass).
    public var appliedPosition: Int64 { state.withLock { $0.applied } }

    /// Follows the log until the task is cancelled, and keeps the chain check moving beside
    /// it. Database outages are waited out.
    public func run() async {
        await withDiscardingTaskGroup { tasks in
            tasks.addTask { await self.watchChain() }
            await follow()
            tasks.cancelAll()
        }
    }

    private func follow() async {
        let listener = AppendListener(conninfo: conninfo, logger: logger)
        var prepared = false
        while !Task.isCancelled {
            do {
                if !prepared {
                    try await resetChangedProjections()
                    try await listener.prepare()
                    prepared = true
                }
                switch try await applyNextPage() {
                case .none: try await listener.wait(timeout: .seconds(1))
                case .some: await gather(for: gatherWait)
                case .full: break
                }
            } catch is CancellationError {
                break
            } catch {
                if Task.isCancelled { break }
                logger.warning("projection runner pass failed; retrying", metadata: ["error": "\(LedgerServiceError.mapping(error))"])
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        await listener.close()
    }

    /// Verifies the chain along the log, at most five times a second, woken by this runner's
    /// progress. A task of its own: in the runner's loop, each check (a page of hashing, two
    /// queries) delayed the next pass, which every read right after a write waits for.
    private func watchChain() async {
        let chain = chain
        while !Task.isCancelled {
            let began = ContinuousClock.now
            do {
                if try await chain.advance() == 0 {
                    // Caught up: wait for the runner to apply more (a continuation it resumes),
                    // or a second, after which the check runs anyway (another server's appends).
                    _ = await waitForProgress(to: appliedPosition + 1, timeout: .seconds(1))
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning("chain check failed; retrying", metadata: ["error": "\(LedgerServiceError.mapping(error))"])
            }
            try? await Task.sleep(until: began + .milliseconds(200))
        }
    }

    /// Applies the log up to its head and returns (for commands that read the projections
    /// without a server running); `progress` gets (applied position, head) after each page.
    public func catchUp(progress: (@Sendable (Int64, Int64) -> Void)? = nil, verifyingChain: Bool = true) async throws {
        try await resetChangedProjections()
        let head = try await store.headPosition()
        if groups.count > 1 {
            try await catchUpByGroup(head: head, progress: progress)
            if verifyingChain { while try await chain.advance() > 0 {} }
            return
        }
        var start = try await readStart()
        var page = try await decodedPage(after: start)
        while let last = page.last {
            // The next page is read and decoded while PostgreSQL writes this one: a rebuild
            // then keeps both of this machine's cores busy instead of taking turns.
            async let following = decodedPage(after: last.place.position)
            _ = try await apply(page, readAfter: start)
            progress?(appliedPosition, head)
            if appliedPosition >= last.place.position {
                start = last.place.position
                page = try await following
            } else {
                _ = try await following
                start = try await readStart()
                page = try await decodedPage(after: start)
            }
        }
        // Nothing after `start`: the projections hold the log up to it, even when this run
        // applied no page (a read after it must not wait for one).
        advance(to: start)
        if verifyingChain { while try await chain.advance() > 0 {} }
    }

    /// A runner of several groups (a rebuild's, alone on its schema): one task reads and
    /// decodes pages ahead, and each group applies them on its own connection at its own pace
    /// (`PageChannel`), so a page that is slow for one group (revenue's statements per sale)
    /// does not hold the other's next page. `appliedPosition` is the lowest group's.
    private func catchUpByGroup(head: Int64, progress: (@Sendable (Int64, Int64) -> Void)?) async throws {
        let start = try await readStart()
        let channel = PageChannel<DecodedPage>(consumers: groups.count, capacity: 4)
        let reached = GroupPositions(Array(repeating: start, count: groups.count))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                var after = start
                while true {
                    let page = try await self.decodedPage(after: after)
                    guard let last = page.last else { break }
                    try await channel.send(page)
                    after = last.place.position
                }
                await channel.finish()
            }
            for index in groups.indices {
                tasks.addTask {
                    var readAfter = start
                    var analyzeAt = Self.firstAnalysis
                    while let page = try await channel.next(index) {
                        guard let position = try await self.applyGroup(index, page, readAfter: readAfter) else {
                            throw LedgerServiceError(.projectionsBehind, "another runner applied this schema's projections during the rebuild")
                        }
                        readAfter = position
                        if position >= analyzeAt {
                            try await self.analyze(group: index)
                            while analyzeAt <= position { analyzeAt *= 2 }
                        }
                        let lowest = reached.positions.withLock { positions in
                            positions[index] = position
                            return positions.min() ?? position
                        }
                        self.advance(to: lowest)
                        progress?(self.appliedPosition, head)
                    }
                }
            }
            do {
                while try await tasks.next() != nil {}
            } catch {
                await channel.fail(error)
                tasks.cancelAll()
                throw error
            }
        }
        // Where every group got to, also when there was no page to apply.
        advance(to: reached.positions.withLock { $0.min() ?? start })
    }

    /// A rebuild's tables start empty and autovacuum looks at them once a minute at most, so
    /// the plans of its statements (generic ones are made once and kept) would be made for
    /// empty tables: a rating statement then scanned the whole revenue table, 5 ms a statement
    /// and growing with the log. Each group analyzes its tables at 10,000 events and every
    /// doubling after (11 times in 20,000,000), which also makes the kept plans anew.
    static let firstAnalysis: Int64 = 10_000

    /// Tables a rebuild only fills by COPY are left out: no statement of the rebuild reads them,
    /// and analyzing them cost 3.4 s of a 1,000,000-event rebuild (pg_stat_statements).
    private func analyze(group index: Int) async throws {
        let tables = groups[index].flatMap(\.tables).filter { !ProjectionBatch.copiedTables.contains($0) }
        guard !tables.isEmpty else { return }
        try await store.pool.withConnection { connection in
            for table in tables { try connection.execute("ANALYZE \(identifier: table)") }
        }
    }

    /// Returns once every projection has applied the log up to `position`, or throws
    /// `projectionsBehind` after `timeout`. The wait is a continuation that this runner resumes
    /// as soon as a page it applied (or skipped, another server's runner having applied it)
    /// reaches `position`: no sleep, no query, however many reads wait.
    public func waitUntilApplied(_ position: Int64, timeout: Duration) async throws {
        if await waitForProgress(to: position, timeout: timeout, urgent: true) { return }
        try Task.checkCancellation()
        // This process's runner may be stopped or not running (a command that reads without
        // serving): the stored checkpoints are the last word, asked once.
        if try await storedPosition() >= position { return }
        throw LedgerServiceError(.projectionsBehind, "the read models have not reached position \(position) yet")
    }

    /// Whether this runner reached `position` within `timeout` (false also when cancelled), and
    /// nothing more: for a task that only wants waking when the projections move (the chain
    /// check, webhook delivery, the event feed's long poll), where the stored checkpoints
    /// `waitUntilApplied` asks on its time-out would be a query per idle wait for nothing.
    ///
    /// `urgent`: a read waits (`waitUntilApplied`), so the runner must not gather appends first.
    public func waitForProgress(to position: Int64, timeout: Duration, urgent: Bool = false) async -> Bool {
        if state.withLock({ $0.applied >= position }) { return true }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter &+= 1 }
            return state.nextWaiter
        }
        let expiry = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.resumeWaiter(id, reached: false)
        }
        defer { expiry.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (resumeNow, gathering) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                    if state.applied >= position || Task.isCancelled { return (true, nil) }
                    state.waiters[id] = (position, urgent, continuation)
                    if urgent { state.lastRead = .now }
                    return (false, urgent ? state.gathering.take() : nil)
                }
                gathering?.resume()
                if resumeNow { continuation.resume(returning: state.withLock { $0.applied >= position }) }
            }
        } onCancel: {
            resumeWaiter(id, reached: false)
        }
    }

    /// Resumes one waiter (its time-out or cancellation), if it is still waiting.
    private func resumeWaiter(_ id: UInt64, reached: Bool) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: reached)
    }

    /// The lowest checkpoint of the projections, as stored.
    public func storedPosition() async throws -> Int64 {
        let names = projections.map { Optional($0.name) }
        let count = projections.count
        return try await store.pool.withConnection { connection in
            let row = try connection.query("""
                SELECT coalesce(min(position), 0), count(*) FROM projection_checkpoints WHERE name = ANY(\(PostgresArray(names)))
                """)[0]
            let found: Int64 = try row.decode(1)
            return found == Int64(count) ? try row.decode(0) : 0
        }
    }

    /// Empties and restarts any projection whose stored version differs from its code's.
    func resetChangedProjections() async throws {
        let projections = projections
        let logger = logger
        try await store.pool.withTransaction { connection in
            try Self.lock(connection)
            for projection in projections {
                let row = try connection.query("SELECT version FROM projection_checkpoints WHERE name = \(projection.name)").first
                let stored: Int32? = try row?.decode(0)
                guard stored != projection.version else { continue }
                if stored != nil {
                    logger.notice("projection version changed: rebuilding from the first event", metadata: [
                        "projection": "\(projection.name)", "from": "\(stored!)", "to": "\(projection.version)",
                    ])
                }
                for table in projection.tables { try connection.execute("DELETE FROM \(identifier: table)") }
                try connection.execute("""
                    INSERT INTO projection_checkpoints (name, version, position) VALUES (\(projection.name), \(projection.version), 0)
                    ON CONFLICT (name) DO UPDATE SET version = excluded.version, position = 0, updated_at = now()
                    """)
            }
        }
    }

    /// What a pass found: nothing to apply (wait for an append), some events, or a full page
    /// (or a page to read again from the stored checkpoints): go on at once.
    enum Pass { case none, some, full }

    /// Applies the next page of events.
    func applyNextPage() async throws -> Pass {
        let start = try await readStart()
        let count: Int
        if groups.count == 1, !copyingRows {
            let (applied, reached) = try await applyTail(after: start)
            settle(reached: reached, readAfter: start)
            if reached == nil { return .full }
            count = applied
        } else {
            count = try await apply(try await decodedPage(after: start), readAfter: start)
        }
        return count == 0 ? .none : count >= pageSize ? .full : .some
    }

    /// Waits up to `wait` for more appends to gather before the next pass, unless a read is
    /// waiting for the projections or starts to (`waitUntilApplied`), which ends it at once.
    func gather(for wait: Duration) async {
        guard wait > .zero else { return }
        let now = ContinuousClock.now
        if let lastRead = state.withLock({ $0.lastRead }), now - lastRead < Self.readsLately { return }
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try? await Task.sleep(for: wait) }
            tasks.addTask { await self.untilAReadWaits() }
            await tasks.next()
            tasks.cancelAll()
        }
    }

    /// Returns once a read waits for the projections (at once if one does), or when cancelled.
    private func untilAReadWaits() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if Task.isCancelled || state.waiters.values.contains(where: \.urgent) { return true }
                    state.gathering = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.gathering.take() }?.resume()
        }
    }

    /// The server's pass over the log's tail: the page is read inside the transaction that
    /// applies it, in three round trips (lock, checkpoints and page; the folded states; the
    /// writes and COMMIT) where reading the page, then each statement, took eight. A read
    /// waits for this pass (it must see its own write), so the pass's round trips are what a
    /// read right after a write pays under load. Returns the events read and the position
    /// reached: `start` for an empty page, nil when the stored checkpoints are behind `start`,
    /// which an idle pass notices too, so reads do not go on trusting pages a crash lost until
    /// the next append.
    private func applyTail(after start: Int64) async throws -> (count: Int, reached: Int64?) {
        let store = store
        let projections = projections
        let pageSize = pageSize
        return try await store.pool.withConnection { connection in
            do {
                // Read models are derived: a page lost in a crash goes with its checkpoint, so it
                // commits without waiting for its flush (as `applyGroup`).
                let opened = try connection.pipeline([
                    "BEGIN", Self.lockStatement, .commitWithoutWaitingForFlush, Self.checkpointsStatement,
                    store.eventsStatement(after: start, limit: pageSize),
                ], resultFormat: .binary)
                let page = try Self.decode(store.recordedEvents(opened[4]))
                let checkpoints = try Self.checkpoints(in: opened[3])
                if Self.behind(checkpoints, projections: projections, start: start) {
                    try connection.execute("ROLLBACK")
                    return (page.count, nil)
                }
                guard let last = page.last?.place else {
                    try connection.execute("ROLLBACK")
                    return (0, start)
                }
                let writes = try Self.writes(
                    of: page, projections: projections, checkpoints: checkpoints, through: last.position, on: connection, copying: false)
                _ = try connection.pipeline(writes.statements + ["COMMIT"])
                return (page.count, last.position)
            } catch {
                // A failed statement aborted the rest of the pipeline, COMMIT with it.
                if connection.isInTransaction { _ = try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// Where to read from: where this runner got to, once known (the stored checkpoints are
    /// only read again under the lock; another runner ahead of us costs a page read, never a
    /// double count), else the stored checkpoints.
    private func readStart() async throws -> Int64 {
        let known = appliedPosition
        return known >= 0 ? known : try await storedPosition()
    }

    private func decodedPage(after start: Int64) async throws -> DecodedPage {
        try Self.decode(try await store.events(after: start, limit: pageSize))
    }

    /// Applies `page`, read after `start`, in a transaction of its own; returns its event count.
    private func apply(_ page: DecodedPage, readAfter start: Int64) async throws -> Int {
        guard !page.isEmpty else {
            advance(to: start)
            return 0
        }
        settle(reached: try await applyGroups(page, readAfter: start), readAfter: start)
        return page.count
    }

    /// Moves `applied` to where a pass `reached`; nil means the stored checkpoints are behind
    /// where the pass read from (a database crash lost pages committed without their flush):
    /// the next pass reads again from the checkpoints.
    private func settle(reached: Int64?, readAfter start: Int64) {
        guard let reached else {
            logger.notice("projection checkpoints behind this runner; reading again from them", metadata: ["from": "\(start)"])
            state.withLock { $0.applied = -1 }
            return
        }
        advance(to: reached)
    }

    /// Applies `page` to each group in a transaction of its own, the groups concurrently; returns
    /// the page's last position, or nil when a group found its checkpoints behind `start`. A
    /// group that failed leaves `applied` where it was: the page is read again, and the groups
    /// that did commit skip it by their checkpoints.
    private func applyGroups(_ page: DecodedPage, readAfter start: Int64) async throws -> Int64? {
        // The server's runner has one group: no child task per page.
        if groups.count == 1 { return try await applyGroup(0, page, readAfter: start) }
        return try await withThrowingTaskGroup(of: Int64?.self) { tasks in
            for index in groups.indices { tasks.addTask { try await self.applyGroup(index, page, readAfter: start) } }
            var reached: [Int64?] = []
            for try await position in tasks { reached.append(position) }
            return reached.contains { $0 == nil } ? nil : reached.compactMap { $0 }.min()
        }
    }

    /// Applies `page` to group `index` in a transaction of its own; the page's last position,
    /// or nil when the group's checkpoints are behind `start`.
    private func applyGroup(_ index: Int, _ page: DecodedPage, readAfter start: Int64) async throws -> Int64? {
        let groups = groups
        let copying = copyingRows
        return try await store.pool.withTransaction { connection -> Int64? in
            try Self.lock(connection, group: groups.count > 1 ? index : nil)
            // Read models are derived: a page lost in a crash goes with its checkpoint (same
            // transaction) and is applied again from the events. So the page commits without
            // waiting for its flush, and takes no fsync from the appends it follows.
            _ = try connection.query(.commitWithoutWaitingForFlush)
            return try Self.apply(decoded: page, projections: groups[index], on: connection, readAfter: start, copying: copying)
        }
    }

    /// Applies `page` (the events after `start`) to every projection whose checkpoint is below
    /// each event, and moves the checkpoints, on `connection` inside the caller's transaction
    /// (which holds the lock). Returns the page's last position; nil for an empty page, or when
    /// a checkpoint is below `start` (the events between are not in the page: nothing is applied).
    static func apply(_ page: [RecordedEvent], projections: [any Projection], on connection: Connection) throws -> Int64? {
        try apply(decoded: decode(page), projections: projections, on: connection)
    }

    /// A page of events decoded, each with its place in the log.
    typealias DecodedPage = [(place: EventPlace, event: LedgerEvent)]

    static func decode(_ page: [RecordedEvent]) throws -> DecodedPage {
        try page.map { (place: EventPlace(position: $0.position, recordedAtMs: $0.recordedAt.microsecondsSince1970 / 1000, hash: $0.hash), event: try $0.ledgerEvent) }
    }

    static func apply(
        decoded: DecodedPage, projections: [any Projection], on connection: Connection, readAfter start: Int64 = 0, copying: Bool = false
    ) throws -> Int64? {
        guard let last = decoded.last?.place else { return nil }
        let checkpoints = try Self.checkpoints(in: connection.query(checkpointsStatement))
        if behind(checkpoints, projections: projections, start: start) { return nil }
        let writes = try writes(of: decoded, projections: projections, checkpoints: checkpoints, through: last.position, on: connection, copying: copying)
        _ = try connection.pipeline(writes.statements)
        for copy in writes.copies {
            _ = try connection.copyIn("COPY \(identifier: copy.table) (\(unsafeRaw: copy.columns.joined(separator: ", "))) FROM STDIN") { writer in
                for row in copy.rows { try writer.writeRow(row) }
            }
        }
        return last.position
    }

    static let checkpointsStatement: SQL = .prepared("SELECT name, position FROM projection_checkpoints")

    /// Whether a stored checkpoint is below `start`, where this runner read from: pages a
    /// database crash lost (they commit without their flush), to be applied again.
    static func behind(_ checkpoints: [String: Int64], projections: [any Projection], start: Int64) -> Bool {
        projections.contains { (checkpoints[$0.name] ?? 0) < start }
    }

    static func checkpoints(in rows: PostgresRows) throws -> [String: Int64] {
        var checkpoints: [String: Int64] = [:]
        for row in rows { checkpoints[try row.decode(0)] = try row.decode(1) }
        return checkpoints
    }

    /// Every row change of `page` for `projections` (each from its checkpoint on), combined
    /// into few statements (ProjectionBatch), and the checkpoints moved to `last`: a page's
    /// writes go to the server in one round trip (pipeline mode), inside the caller's
    /// transaction, not one per change. Folding projections read their states here.
    static func writes(
        of page: DecodedPage, projections: [any Projection], checkpoints: [String: Int64], through last: Int64,
        on connection: Connection, copying: Bool
    ) throws -> (statements: [SQL], copies: [ProjectionBatch.CopyRows]) {
        var statements: [SQL] = []
        var copies: [ProjectionBatch.CopyRows] = []
        // Events recorded before they named their app are read as the legacy app's, which the
        // log names (read only for a page that holds one: a log begun by this release has none).
        // A log that records no apps yet writes them under "" (never served by this release;
        // `replay` refuses to rebuild it).
        var page = page
        if page.contains(where: { $0.event.recordedWithoutApp }), let legacy = try LegacyApp.read(on: connection) {
            page = page.map { (place: $0.place, event: $0.event.withApp(legacy)) }
        }
        for projection in projections {
            let checkpoint = checkpoints[projection.name] ?? 0
            var batch = ProjectionBatch()
            if let folding = projection as? any FoldingProjection {
                if let states = try fold(folding, page, after: checkpoint, on: connection, into: &batch) { statements.append(states) }
            } else {
                for (place, event) in page where place.position > checkpoint {
                    for change in projection.changes(for: event, at: place) { batch.add(change) }
                }
            }
            let writes = batch.writes(copying: copying)
            statements += writes.statements
            copies += writes.copies
        }
        let names = PostgresArray(projections.map { Optional($0.name) })
        statements.append(.prepared("""
            UPDATE projection_checkpoints SET position = greatest(position, \(last)), updated_at = now()
            WHERE name = ANY(\(names))
            """))
        return (statements, copies)
    }

    /// Folds `page` (its events after `checkpoint`) through `projection`: the states of the keys
    /// the page names are read in one query, folded in log order, and the ones that changed are
    /// returned as one upsert, to run with the page's rows.
    static func fold<P: FoldingProjection>(
        _ projection: P, _ page: DecodedPage, after checkpoint: Int64, on connection: Connection, into batch: inout ProjectionBatch
    ) throws -> SQL? {
        let events = page.filter { $0.place.position > checkpoint }
        var keys = Set<String>()
        for (_, event) in events { keys.formUnion(projection.stateKeys(for: event)) }
        var states: [String: P.State] = [:]
        if !keys.isEmpty {
            // Unnamed, not prepared: planned for its own array each time. Prepared, the plan cache
            // switched to a generic plan made while the table was near empty, a sequential scan
            // kept as the table grew: 0.74 ms a call at 7,500 keys against 0.02 ms by the index
            // (pg_stat_statements, docs/benchmarks.md, 2026-11-29).
            let rows = try connection.query("""
                SELECT key, state FROM \(identifier: projection.stateTable) WHERE key = ANY(\(PostgresArray(keys.map { Optional($0) })))
                """)
            for row in rows {
                let text: String = try row.decode(1)
                states[try row.decode(0)] = try LedgerJSON.decoder.decode(P.State.self, from: Data(text.utf8))
            }
        }
        let loaded = states
        for (place, event) in events {
            for change in projection.fold(event, at: place, states: &states) { batch.add(change) }
        }
        let changed = states.filter { loaded[$0.key] != $0.value }.sorted { $0.key < $1.key }
        guard !changed.isEmpty else { return nil }
        let texts = try changed.map { Optional(String(decoding: try LedgerJSON.encoder.encode($0.value), as: UTF8.self)) }
        return .prepared("""
            INSERT INTO \(identifier: projection.stateTable) (key, state)
            SELECT * FROM unnest(\(PostgresArray(changed.map { Optional($0.key) }))::text[], \(PostgresArray(texts))::text[])
            ON CONFLICT (key) DO UPDATE SET state = excluded.state
            """)
    }

    private func advance(to position: Int64) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.applied = max(state.applied, position)
            let applied = state.applied
            let due = state.waiters.filter { $0.value.position <= applied }
            for id in due.keys { state.waiters.removeValue(forKey: id) }
            return due.values.map(\.continuation)
        }
        // Resumed outside the lock: a resumed read may call back into the runner at once.
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Serializes runners of one database (the key is the projections' own, not the append
    /// lock's): of the connection's schema, or of `schema` (a replay swapping that schema's
    /// tables), or of one `group` of a runner that writes its groups concurrently.
    static func lock(_ connection: Connection, schema: String? = nil, group: Int? = nil) throws {
        if let schema {
            _ = try connection.query("SELECT pg_advisory_xact_lock(1279608904, hashtext(\(schema)))")
        } else if let group {
            _ = try connection.query(.prepared("SELECT pg_advisory_xact_lock(1279608904, hashtext(current_schema() || '#' || \(group)))"))
        } else {
            _ = try connection.query(lockStatement)
        }
    }

    /// Takes the lock of all projections of the connection's schema, inside the caller's
    /// transaction: for work that reads the projections' tables and must not see half of a
    /// page (the history summarizer), as a runner's pass would wait for it.
    public static func lockProjections(on connection: Connection) throws {
        _ = try connection.query(lockStatement)
    }

    /// The lock of all projections of the connection's schema (see `lock`).
    static let lockStatement: SQL = .prepared("SELECT pg_advisory_xact_lock(1279608904, hashtext(current_schema()))")
}

/// Where each group of a rebuild got to, shared by the groups' tasks.
private final class GroupPositions: Sendable {
    let positions: Mutex<[Int64]>
    init(_ positions: [Int64]) { self.positions = Mutex(positions) }
}
