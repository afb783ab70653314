import AppStore
import EventStore
import Foundation
import Ledger
import Postgres
import Primitives

/// Every question the ledger's flow asks of its log, in one place: the context of a decision,
/// the receipts still waiting for Apple, the submissions nobody finished, what an idempotency
/// key recorded, the catalog, and what an import or `verify` must check. The service layer
/// above asks these questions and never writes SQL against `events` itself, so the log's
/// shape, its indexes and the statements that use them are read together here.
public struct LedgerReads: Sendable {
    let pool: ConnectionPool
    public let catalogs: CatalogStore
    /// The log's legacy app, once read.
    public let legacy: LegacyAppName

    public init(pool: ConnectionPool, catalogs: CatalogStore = CatalogStore(), legacy: LegacyAppName = LegacyAppName()) {
        self.pool = pool
        self.catalogs = catalogs
        self.legacy = legacy
    }

    // MARK: - Deciding

    /// What the ledger recorded about the transactions, orders and user one decision concerns,
    /// in one round trip (`ContextLoader`).
    public func context(
        for evidence: Evidence, userId: String?, orderId: String?, bundleId: String, transferPolicy: TransferPolicy
    ) async throws -> PurchaseContext {
        let catalogs = catalogs
        return try await pool.withConnection { connection in
            try ContextLoader(connection: connection).load(
                evidence: evidence, userId: userId, namedOrderId: orderId, catalogs: catalogs, bundleId: bundleId,
                transferPolicy: transferPolicy)
        }
    }

    /// `context(for:...)` on a connection the caller holds (imports decide inside their batch).
    public func context(
        for evidence: Evidence, userId: String?, bundleId: String, transferPolicy: TransferPolicy, on connection: Connection
    ) throws -> PurchaseContext {
        try ContextLoader(connection: connection).load(
            evidence: evidence, userId: userId, namedOrderId: nil, catalogs: catalogs, bundleId: bundleId, transferPolicy: transferPolicy)
    }

    /// What each transaction became (its stream's first event: a delivery or a renewal), in
    /// the order of `transactionIds`; unknown ones are left out.
    public func transactionRecords(_ transactionIds: [String]) async throws -> [TransactionRecord] {
        guard !transactionIds.isEmpty else { return [] }
        let found = try await pool.withConnection { connection in
            try ContextLoader.transactionRecords(connection.query(ContextLoader.transactionsQuery(transactionIds)))
        }
        return transactionIds.compactMap { found[$0] }
    }

    /// The catalog in force for the app `bundleId`.
    public func catalog(of bundleId: String) async throws -> Catalog {
        try await catalogs()[bundleId]
    }

    /// Every app's catalog in force.
    public func catalogs() async throws -> AppCatalogs {
        let catalogs = catalogs
        return try await pool.withConnection { try catalogs.current(on: $0) }
    }

    // MARK: - Unfinished work

    /// A submission whose last event is `VerificationPending`: Apple must be asked again.
    public struct PendingVerification: Sendable {
        public var streamVersion: Int64
        public var pending: VerificationPending
    }

    /// Submissions waiting for Apple, soonest due first.
    public func pendingVerifications(limit: Int = 1_000) async throws -> [PendingVerification] {
        try await pool.withConnection { connection in
            try connection.query(.prepared("""
                SELECT p.stream_version, p.payload FROM events p
                WHERE p.event_type = 'VerificationPending'
                  AND NOT EXISTS (SELECT 1 FROM events n WHERE n.stream_id = p.stream_id AND n.stream_version > p.stream_version)
                ORDER BY (p.payload->>'next_attempt_at_ms')::bigint
                LIMIT \(Int64(limit))
                """)).map { row in
                PendingVerification(
                    streamVersion: try row.decode(0),
                    pending: try LedgerJSON.decoder.decode(VerificationPending.self, from: Data(row.decode(1, as: JSONB.self).bytes)))
            }
        }
    }

    /// A submission whose stream holds only `ReceiptSubmitted`: recorded, never decided.
    public struct OpenSubmission: Sendable {
        public var position: Int64
        public var submitted: ReceiptSubmitted
        /// Recorded longer ago than the grace given: no request is still working on it.
        public var abandoned: Bool
    }

    /// A mark a worker scanning the log for unfinished work keeps in `worker_checkpoints`
    /// (migration 0025), shared by every server: everything at or before it is done.
    public enum WorkerMark: String, Sendable {
        /// Every receipt submission at or before it is decided (`RetryWorker`).
        case undecidedSubmissions = "undecided-submissions"
        /// Every delivery at or before it is finished with Apple or refused (`FinishTransactionWorker`).
        case unfinishedDeliveries = "unfinished-deliveries"
    }

    /// Where `mark` stands; 0 when no server has set it yet.
    public func position(of mark: WorkerMark) async throws -> Int64 {
        try await pool.withConnection { connection in
            try connection.query(.prepared("SELECT position FROM worker_checkpoints WHERE worker = \(mark.rawValue)")).first?.decode(0) ?? 0
        }
    }

    /// Moves `mark` forward to `position`, never back (another server may have moved it
    /// further). Its commit does not wait for the WAL's flush: a move lost to a crash only
    /// means scanning that part again.
    public func move(_ mark: WorkerMark, to position: Int64) async throws {
        try await pool.withConnection { connection in
            _ = try connection.pipeline([.commitWithoutWaitingForFlush, .prepared("""
                INSERT INTO worker_checkpoints AS c (worker, position) VALUES (\(mark.rawValue), \(position))
                ON CONFLICT (worker) DO UPDATE SET position = excluded.position, updated_at = now()
                WHERE c.position < excluded.position
                """)])
        }
    }

    /// The submissions after `position` that nothing decided yet, oldest first, and the log's
    /// head when they were read. A submission is `abandoned` once recorded more than `grace`
    /// ago by the database's clock (a request still asking Apple is not abandoned). Every
    /// submission at or before `head` and not listed was decided, so a caller that remembers
    /// `head` (or the first listed position) never scans the decided past again.
    public func openSubmissions(after position: Int64, grace: Duration, limit: Int = 1_000) async throws -> (open: [OpenSubmission], head: Int64) {
        let graceMs = Millis.of(grace)
        return try await pool.withConnection { connection in
            // One statement, one snapshot: the head and the open set agree.
            let rows = try connection.query(.prepared("""
                SELECT h.head, s.position, s.payload, s.recorded_at < now() - \(graceMs) * interval '1 millisecond'
                FROM (SELECT coalesce(max(position), 0) AS head FROM events) h
                LEFT JOIN LATERAL (
                    SELECT o.position, o.payload, o.recorded_at FROM events o
                    WHERE o.event_type = 'ReceiptSubmitted' AND o.position > \(position)
                      AND NOT EXISTS (SELECT 1 FROM events n WHERE n.stream_id = o.stream_id AND n.stream_version = 2)
                    ORDER BY o.position LIMIT \(Int64(limit))
                ) s ON true
                """))
            var head = position
            var open: [OpenSubmission] = []
            for row in rows {
                head = try row.decode(0)
                guard let at: Int64 = try row.decode(1) else { continue }
                open.append(OpenSubmission(
                    position: at,
                    submitted: try LedgerJSON.decoder.decode(ReceiptSubmitted.self, from: Data(row.decode(2, as: JSONB.self).bytes)),
                    abandoned: try row.decode(3)))
            }
            return (open, head)
        }
    }

    // MARK: - Wallets and consent

    /// A user's balance of `unit` in the app of `streams` as the log holds it, and the version
    /// of the user's wallet stream there, read in one statement so they agree: a spend appends
    /// at that version.
    public func wallet(userId: String, unit: String, in streams: AppStreams) async throws -> (wallet: Wallet, version: Int64) {
        let stream = streams.wallet(userId: userId, unit: unit)
        let legacy = try await legacyApp()
        return try await pool.withConnection { connection in
            var wallet = Wallet(userId: userId, unit: unit, bundleId: streams.bundleId, legacyApp: legacy)
            var version: Int64 = 0
            // The reversals of the user's refunds too (the second event of each refund's stream),
            // found through the refunds so both look-ups stay on their indexes.
            for row in try connection.query("""
                SELECT event_type, payload, CASE WHEN stream_id = \(stream) THEN stream_version ELSE 0 END, position FROM events
                WHERE (event_type IN ('PurchaseDelivered', 'PurchaseRefunded') AND payload->>'user_id' = \(userId))
                   OR stream_id = \(stream)
                UNION ALL
                SELECT v.event_type, v.payload, 0, v.position
                FROM events r JOIN events v ON v.stream_id = r.stream_id AND v.stream_version = 2
                WHERE r.event_type = 'PurchaseRefunded' AND r.payload->>'user_id' = \(userId)
                ORDER BY 4
                """) {
                wallet.apply(try LedgerEvent(type: row.decode(0), payload: Data(row.decode(1, as: JSONB.self).bytes)))
                version = max(version, try row.decode(2))
            }
            return (wallet, version)
        }
    }

    /// The user's latest word in the app of `streams` on sending consumption data to Apple, or
    /// nil if never asked.
    public func consent(userId: String, in streams: AppStreams) async throws -> ConsumptionConsentRecorded? {
        try await pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT payload FROM events WHERE stream_id = \(streams.consent(userId: userId)) ORDER BY stream_version DESC LIMIT 1
                """).first else { return nil }
            return try LedgerJSON.decoder.decode(ConsumptionConsentRecorded.self, from: Data(row.decode(0, as: JSONB.self).bytes))
        }
    }

    // MARK: - What to ask Apple about

    /// Subscriptions whose every known period ended before `nowMs`, none refunded, while the
    /// newest renewal information (if any) still said they would renew: a renewal or an expiry
    /// the ledger should have heard of and did not. With each, its environment.
    /// `bundleId`: the app (ownership's, else the first delivery's); nil when recorded before
    /// events named their app.
    public func subscriptionsOverdue(
        nowMs: Int64, limit: Int = 500
    ) async throws -> [(originalTransactionId: String, environment: String, bundleId: String?)] {
        let delivery = Streams.transaction("")
        return try await pool.withConnection { connection in
            try connection.query("""
                SELECT s.original_transaction_id, s.environment,
                       coalesce(o.bundle_id, (SELECT d.payload->>'bundle_id' FROM events d
                                              WHERE d.stream_id = \(delivery) || s.original_transaction_id AND d.stream_version = 1))
                FROM (SELECT e.original_transaction_id, min(e.environment) AS environment, max(e.expires_date_ms) AS expires
                      FROM projection_subscription_entries e
                      LEFT JOIN projection_subscription_renewals r ON r.original_transaction_id = e.original_transaction_id
                      WHERE r.auto_renew IS DISTINCT FROM false
                      GROUP BY e.original_transaction_id
                      HAVING max(e.expires_date_ms) < \(nowMs) AND bool_and(e.cancellation_date_ms IS NULL)
                      ORDER BY max(e.expires_date_ms) LIMIT \(Int64(limit))) s
                LEFT JOIN projection_ownership o ON o.original_transaction_id = s.original_transaction_id
                ORDER BY s.expires
                """).map { (try $0.decode(0), try $0.decode(1), try $0.decode(2)) }
        }
    }

    /// A sale the ledger knows only from verifyReceipt's answer (no storefront, no price as
    /// Apple signed it), not yet asked of Apple's Get Transaction Info.
    public struct ReceiptOnlySale: Sendable, Hashable {
        /// The position of its `PurchaseDelivered` or `SubscriptionRenewalSeen`.
        public var position: Int64
        public var transactionId: String
        public var originalTransactionId: String
        /// `Production` or `Sandbox`, as Apple's receipt said.
        public var environment: String
        /// The app it was delivered in; nil when recorded before events named their app.
        public var bundleId: String? = nil
    }

    /// The sales after `position` seen only in receipts, oldest first, and the log's head when
    /// they were read (one statement, one snapshot: every such sale at or before `head` and not
    /// listed has its `TransactionInfoRecorded`, so a caller that remembers `head`, or the last
    /// listed position of a full page, never scans that past again).
    ///
    /// A sale is a `PurchaseDelivered` or `SubscriptionRenewalSeen` of the environments the
    /// App Store Server API serves (`Production`, `Sandbox`) whose evidence came from
    /// verifyReceipt: a submission of kind `receipt` (its `submission_id`, or a renewal's
    /// `source`), or a renewal shown by a v1 notification (`source` `notification:<id>`, whose
    /// body is verifyReceipt's `unified_receipt`). Signed transactions, restores (Apple's
    /// signed history), v2 notifications and status answers carry Apple's signed transaction
    /// already; imports ask nothing of Apple; a Family Sharing member's access is no sale. A
    /// sale with a `Streams.transactionInfo` stream was asked about and recorded.
    public func receiptOnlySales(after position: Int64, limit: Int = 100) async throws -> (sales: [ReceiptOnlySale], head: Int64) {
        // The streams' prefixes, spelled by `Streams` (each is its function of ""), and the
        // `source` a notification's effects carry (`PurchaseService.recordNotification`).
        let submissions = Streams.submission("")
        let notifications = Streams.notification("")
        let transactionInfo = Streams.transactionInfo("")
        let notificationSource = "notification:"
        return try await pool.withConnection { connection in
            let rows = try connection.query(.prepared("""
                SELECT h.head, s.position, s.transaction_id, s.original_transaction_id, s.environment, s.bundle_id
                FROM (SELECT coalesce(max(position), 0) AS head FROM events) h
                LEFT JOIN LATERAL (
                    SELECT d.position, d.payload->>'transaction_id' AS transaction_id,
                           d.payload->>'original_transaction_id' AS original_transaction_id, d.payload->>'environment' AS environment,
                           d.payload->>'bundle_id' AS bundle_id
                    FROM events d
                    WHERE d.event_type IN ('PurchaseDelivered', 'SubscriptionRenewalSeen') AND d.position > \(position)
                      AND d.payload->>'environment' IN ('Production', 'Sandbox')
                      AND d.payload->'family_shared' IS DISTINCT FROM 'true'::jsonb
                      AND (EXISTS (
                              SELECT 1 FROM events r
                              WHERE r.stream_id = \(submissions) || coalesce(d.payload->>'submission_id', d.payload->>'source')
                                AND r.stream_version = 1 AND r.event_type = 'ReceiptSubmitted' AND r.payload->>'kind' = 'receipt')
                           OR (starts_with(d.payload->>'source', \(notificationSource)) AND EXISTS (
                              SELECT 1 FROM events n
                              WHERE n.stream_id = \(notifications) || substr(d.payload->>'source', length(\(notificationSource)) + 1)
                                AND n.stream_version = 1 AND n.event_type = 'AppleNotificationReceived' AND n.payload->>'version' = 'v1')))
                      AND NOT EXISTS (
                          SELECT 1 FROM events i WHERE i.stream_id = \(transactionInfo) || (d.payload->>'transaction_id') AND i.stream_version = 1)
                    ORDER BY d.position LIMIT \(Int64(limit))
                ) s ON true
                """))
            var head = position
            var sales: [ReceiptOnlySale] = []
            for row in rows {
                head = try row.decode(0)
                guard let at: Int64 = try row.decode(1), let transactionId: String = try row.decode(2) else { continue }
                let original: String? = try row.decode(3)
                sales.append(ReceiptOnlySale(
                    position: at, transactionId: transactionId, originalTransactionId: original ?? transactionId,
                    environment: try row.decode(4), bundleId: try row.decode(5)))
            }
            return (sales, head)
        }
    }

    // MARK: - The log as a whole

    /// Whether this schema has a log and it holds any event (false before the first migration).
    public func holdsEvents() async throws -> Bool {
        try await pool.withConnection { connection in
            guard try connection.query("SELECT to_regclass('events') IS NOT NULL")[0].decode(0, as: Bool.self) else { return false }
            return try connection.query("SELECT EXISTS (SELECT 1 FROM events)")[0].decode(0)
        }
    }

    /// Whether the log holds an event recorded before events named their app: one of the types
    /// that carry `bundle_id` from that release on, without it (docs/several-apps.md). Asked
    /// once, before the log's first `AppsConfigured`: an older log answers at its first such
    /// event, and a log that never lacked one is young.
    public func holdsEventsWithoutApp() async throws -> Bool {
        let types = [
            OrderCreated.eventType, PurchaseDelivered.eventType, SubscriptionRenewalSeen.eventType, PurchaseUnclaimed.eventType,
            BalanceSpent.eventType, ConsumptionConsentRecorded.eventType, CatalogLoaded.eventType,
        ]
        return try await pool.withConnection { connection in
            try connection.query("""
                SELECT EXISTS (SELECT 1 FROM events WHERE event_type = ANY(\(PostgresArray(types.map(Optional.some)))) AND NOT payload ? 'bundle_id')
                """)[0].decode(0)
        }
    }

    // MARK: - Refund requests

    /// CONSUMPTION_REQUEST notifications the ledger has neither answered nor withheld an answer
    /// to (no `consumption-<notification id>` stream), oldest first. One kept unread (its
    /// content not understood) is not among them: it names no transaction, and answering it
    /// would settle the request before a build that reads it records it in full.
    public func unansweredConsumptionRequests(limit: Int = 100) async throws -> [AppleNotificationReceived] {
        try await pool.withConnection { connection in
            try connection.query(.prepared("""
                SELECT n.payload FROM events n
                WHERE n.event_type = 'AppleNotificationReceived' AND n.payload->>'notification_type' = 'CONSUMPTION_REQUEST'
                  AND n.payload->>'unreadable' IS NULL
                  AND NOT EXISTS (SELECT 1 FROM events a WHERE a.stream_id = \(Streams.consumptionAnswerPrefix) || (n.payload->>'notification_id') AND a.stream_version = 1)
                ORDER BY n.position LIMIT \(Int64(limit))
                """)).map { try LedgerJSON.decoder.decode(AppleNotificationReceived.self, from: Data($0.decode(0, as: JSONB.self).bytes)) }
        }
    }

    // MARK: - App Store Connect reports

    /// The reports imported, newest first, with when each was recorded (ms since 1970).
    public func appStoreReports(limit: Int = 200) async throws -> [(recordedAtMs: Int64, report: AppStoreReportImported)] {
        try await pool.withConnection { connection in
            try connection.query(.prepared("""
                SELECT (extract(epoch FROM recorded_at) * 1000)::bigint, payload FROM events
                WHERE event_type = 'AppStoreReportImported' ORDER BY position DESC LIMIT \(Int64(limit))
                """)).map { row in
                (try row.decode(0), try LedgerJSON.decoder.decode(AppStoreReportImported.self, from: Data(row.decode(1, as: JSONB.self).bytes)))
            }
        }
    }

    /// The report imported from the file with this sha256, or nil.
    public func appStoreReport(_ sha256: String) async throws -> AppStoreReportImported? {
        try await pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT payload FROM events WHERE stream_id = \(Streams.appStoreReport(sha256)) AND stream_version = 1
                """).first else { return nil }
            return try LedgerJSON.decoder.decode(AppStoreReportImported.self, from: Data(row.decode(0, as: JSONB.self).bytes))
        }
    }

    // MARK: - Idempotency

    /// The first event recorded under an idempotency key, with its stream, or nil.
    public func event(idempotencyKey key: String) async throws -> (stream: String, event: LedgerEvent)? {
        try await pool.withConnection { connection in
            guard let row = try connection.query(.prepared("""
                SELECT stream_id, event_type, payload FROM events WHERE idempotency_key = \(key)
                """)).first else { return nil }
            return (try row.decode(0), try LedgerEvent(type: row.decode(1), payload: Data(row.decode(2, as: JSONB.self).bytes)))
        }
    }

    // MARK: - Imports and verification

    /// The streams among `streams` that exist.
    public func existingStreams(_ streams: [String]) async throws -> Set<String> {
        try await pool.withConnection { connection in
            Set(try connection.query("""
                SELECT stream_id FROM events WHERE stream_id = ANY(\(PostgresArray(streams.map(Optional.some)))) AND stream_version = 1
                """).map { try $0.decode(0) as String })
        }
    }

    /// How many references events make to documents (`document_sha256`, and each of
    /// `document_sha256_list`), and the first (by position) naming one that is missing.
    public func documentReferences() async throws -> (count: Int64, firstMissing: (position: Int64, name: String)?) {
        try await pool.withConnection { connection in
            let cited = """
                SELECT e.position, e.payload->>'document_sha256' AS name FROM events e
                WHERE e.payload ? 'document_sha256' AND jsonb_typeof(e.payload->'document_sha256') = 'string'
                UNION ALL
                SELECT e.position, n.name FROM events e, jsonb_array_elements_text(e.payload->'document_sha256_list') AS n(name)
                WHERE e.payload ? 'document_sha256_list' AND jsonb_typeof(e.payload->'document_sha256_list') = 'array'
                """
            let count: Int64 = try connection.query("SELECT count(*) FROM (\(unsafeRaw: cited)) c")[0].decode(0)
            let row = try connection.query("""
                SELECT c.position, c.name FROM (\(unsafeRaw: cited)) c
                WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE encode(d.sha256, 'hex') = c.name)
                ORDER BY c.position LIMIT 1
                """).first
            return (count, try row.map { (try $0.decode(0), try $0.decode(1)) })
        }
    }

    // MARK: - Recovery

    /// By `app_transaction_id`, the user the latest purchase delivered under it went to (through
    /// the partial index of migration 0028): whom an Apple account's recovered purchase belongs to.
    public func usersByAppTransaction(_ ids: [String]) async throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        return try await pool.withConnection { connection in
            var users: [String: String] = [:]
            for row in try connection.query("""
                SELECT DISTINCT ON (payload->>'app_transaction_id') payload->>'app_transaction_id', payload->>'user_id' FROM events
                WHERE event_type = 'PurchaseDelivered' AND payload->>'app_transaction_id' = ANY(\(PostgresArray(ids.map(Optional.some))))
                ORDER BY payload->>'app_transaction_id', position DESC
                """) {
                users[try row.decode(0)] = try row.decode(1)
            }
            return users
        }
    }

    // MARK: - The chain as it stands

    /// The chain hash of the event at `position` (nil when the log ends before it) and the
    /// log's head with its hash (0 and the genesis hash for an empty log), in one statement, so
    /// they agree: what a feed consumer's resume is checked against after a restore.
    public static func chainPlace(at position: Int64, on connection: Connection) throws -> (hash: [UInt8]?, head: Int64, headHash: [UInt8]) {
        let row = try connection.query(.prepared("""
            SELECT (SELECT hash FROM events WHERE position = \(position)), h.position, h.hash
            FROM (SELECT 1) one LEFT JOIN (SELECT position, hash FROM events ORDER BY position DESC LIMIT 1) h ON true
            """))[0]
        let head: Int64? = try row.decode(1)
        let headHash: [UInt8]? = try row.decode(2)
        return (try row.decode(0), head ?? 0, headHash ?? ChainVerifier.genesisHash)
    }

    // MARK: - Timelines

    /// The events of `subject` ("kind:id") and of every subject linked from it, found subject by
    /// subject through the links, then the events: each step an index look-up with = ANY, which
    /// the planner cannot turn into a scan the way it may for a recursive query it cannot
    /// estimate. Each row also brings what the chain check needs, so one query serves both.
    public static func timelineEvents(of subject: String, on connection: Connection) throws -> [PostgresRow] {
        var subjects: Set<String> = [subject]
        var frontier = [subject]
        while !frontier.isEmpty {
            let next: [String] = try connection.query(.prepared("""
                SELECT DISTINCT includes FROM projection_timeline_links WHERE subject = ANY(\(PostgresArray(frontier.map(Optional.some))))
                """)).map { try $0.decode(0) }
            frontier = next.filter { subjects.insert($0).inserted }
        }
        return try timelineEvents(subjects: subjects.sorted(), on: connection)
    }

    /// The events the timeline index lists for `subjects`, in log order: position, recorded
    /// time (ms), type, stream, then `ChainVerifier.canonicalColumns` from column 4, so one query
    /// serves the timeline and its chain check. The payload and metadata are read from those,
    /// as text (columns 10 and 11): a jsonb column is sent as the same text, so asking for it
    /// as well made the server write each payload twice. Last, the payload's `transaction_id`
    /// and `original_transaction_id` (17 and 18), which say what an entry is about without
    /// parsing it. Prepared: planning it took 1.4 ms of its 8 at 1,000,000 events, and its
    /// plan (index look-ups all the way) does not depend on how many subjects are asked.
    public static let timelinePayloadColumn = 10, timelineMetadataColumn = 11, timelineCanonicalColumn = 4
    public static let timelineTransactionColumn = 17, timelineOriginalTransactionColumn = 18

    public static func timelineEvents(subjects: [String], on connection: Connection) throws -> [PostgresRow] {
        Array(try connection.query(.prepared("""
            SELECT e.position, (extract(epoch FROM e.recorded_at) * 1000)::bigint, e.event_type, e.stream_id,
                   \(fragment: ChainVerifier.canonicalColumns),
                   e.payload->>'transaction_id', e.payload->>'original_transaction_id'
            FROM events e
            WHERE e.position IN (
                SELECT t.position FROM projection_timeline_events t WHERE t.subject = ANY(\(PostgresArray(subjects.map(Optional.some)))))
            ORDER BY e.position
            """)))
    }
}
