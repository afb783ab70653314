import Foundation
import Ledger
import LedgerProjections
import LedgerStore
import Logging
import Postgres
import Primitives

/// Publishes the chain's digest as `serve` runs (`LEDGER_DIGEST_INTERVAL`, docs/backup-and-restore.md):
/// the head the chain watch verified from the first event, once per interval while the head
/// moves. Each publication is a row of `ledger_digests`, a `ledger.digest` message queued for
/// every webhook endpoint, and a line of `LEDGER_DIGEST_FILE` when set: copies outside the
/// database, against which `verify --digest` proves a restored log (0: it holds that head; 4: a
/// restore lost it). Of several servers, the first whose check finds a digest due publishes it
/// (one transaction under a lock), and writes its own file.
public struct DigestPublisher: Sendable {
    public struct Settings: Sendable {
        /// Between two publications.
        public var interval: Duration
        /// `LEDGER_DIGEST_FILE`: lines are appended to it.
        public var file: String?

        public init(interval: Duration, file: String? = nil) {
            self.interval = interval
            self.file = file
        }
    }

    let pool: ConnectionPool
    let settings: Settings
    let clock: WallClock
    let logger: Logger
    let file: AppendOnlyFile?

    public init(pool: ConnectionPool, settings: Settings, clock: WallClock, logger: Logger) {
        self.pool = pool
        self.settings = settings
        file = settings.file.map { AppendOnlyFile(path: $0, setting: "LEDGER_DIGEST_FILE") }
        self.clock = clock
        self.logger = logger
    }

    /// Checks at each interval, and at least every 30 s (a long interval's first digest is not
    /// held back by a restart), until the task is cancelled; a failed check is logged and retried.
    public func run() async {
        let check = min(settings.interval, .seconds(30))
        while !Task.isCancelled {
            do {
                _ = try await publishIfDue()
            } catch is CancellationError {
                return
            } catch {
                logger.warning("publishing the chain digest failed; trying again", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: check)
        }
    }

    /// Publishes the verified head when it moved past the last digest and the last was published
    /// an interval or more ago (by this server's clock); returns it, or nil when none was due.
    @discardableResult
    public func publishIfDue() async throws -> DigestMessage? {
        let now = clock()
        let intervalMs = Millis.of(settings.interval)
        let published = try await pool.withTransaction { connection -> DigestMessage? in
            // Servers publishing at once wait here; the second then finds the first's row.
            _ = try connection.query(.prepared("SELECT pg_advisory_xact_lock(1279608905, hashtext(current_schema()))"))
            let head = try ChainWatch.state(on: connection)
            guard head.broken == nil, head.position > 0 else { return nil }
            let last = try connection.query(.prepared("SELECT position, published_at_ms FROM ledger_digests ORDER BY position DESC LIMIT 1")).first
            if let last {
                let (position, at): (Int64, Int64) = (try last.decode(0), try last.decode(1))
                guard head.position > position, now - at >= intervalMs else { return nil }
            }
            let message = DigestMessage(position: head.position, hash: head.hash, publishedAtMs: now)
            _ = try connection.execute(.prepared("""
                INSERT INTO ledger_digests (position, hash, published_at_ms, body)
                VALUES (\(message.position), \(message.hash), \(message.publishedAtMs), \(message.bodyText))
                """))
            // Every endpoint's copy waits with the no-one's messages; sequence -1 names a digest.
            _ = try connection.execute(.prepared("""
                INSERT INTO webhook_outstanding (endpoint, position, sequence, user_key)
                SELECT name, \(message.position), \(DigestMessage.sequence), '' FROM webhook_endpoints
                ON CONFLICT DO NOTHING
                """))
            return message
        }
        guard let published else { return nil }
        logger.notice("chain digest published", metadata: ["digest": "\(published.digest)"])
        try await file?.append(published.fileLine)
        return published
    }
}
