@testable import LedgerConsole
import Postgres
import Synchronization
import Testing

/// Console sessions in PostgreSQL on a clock the test moves: 30 minutes without a request ends
/// one, 8 hours end it whatever, and so does its token leaving the configured set or changing
/// scope, for good.
@Suite struct ConsoleSessionStoreTests {
    static let start: Int64 = 1_800_000_000_000
    static let minute: Int64 = 60_000

    @Test("a session lives while used, ends after 30 idle minutes, and after 8 hours in any case")
    func idleAndAbsoluteExpiry() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let clock = TestClock(Self.start)
            let sessions = ConsoleSessions(pool: pool, clock: { clock.now }, tokenCheck: { _, _ in true })
            let (cookie, created) = try await sessions.create(tokenName: "api:abc123", role: .finance)
            clock.advance(29 * Self.minute)
            #expect(try await sessions.find(cookie: cookie) == created)
            // Idle time counts from the latest request, not from sign-in.
            clock.advance(29 * Self.minute)
            #expect(try await sessions.find(cookie: cookie) == created)
            clock.advance(30 * Self.minute + 1)
            #expect(try await sessions.find(cookie: cookie) == nil)

            // Used every 25 minutes: alive until 8 hours after sign-in, not a moment longer.
            let signedIn = clock.now
            let (busy, _) = try await sessions.create(tokenName: "api:abc123", role: .support)
            while clock.now + 25 * Self.minute < signedIn + 8 * 60 * Self.minute {
                clock.advance(25 * Self.minute)
                #expect(try await sessions.find(cookie: busy) != nil, "at \((clock.now - signedIn) / Self.minute) minutes")
            }
            clock.advance(25 * Self.minute)
            #expect(try await sessions.find(cookie: busy) == nil)
        }
    }

    @Test("a session ends for good once its token is removed or its scope changes")
    func tokenRemovedOrChanged() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let clock = TestClock(Self.start)
            let configured = ConfiguredTokens(["api:aaaaaa": .finance, "api:bbbbbb": .finance])
            let sessions = ConsoleSessions(pool: pool, clock: { clock.now }, tokenCheck: { configured.signsIn($0, as: $1) })
            let (removed, _) = try await sessions.create(tokenName: "api:aaaaaa", role: .finance)
            let (rescoped, _) = try await sessions.create(tokenName: "api:bbbbbb", role: .finance)
            #expect(try await sessions.find(cookie: removed) != nil)
            #expect(try await sessions.find(cookie: rescoped) != nil)

            configured.set(["api:bbbbbb": .support])
            #expect(try await sessions.find(cookie: removed) == nil)
            #expect(try await sessions.find(cookie: rescoped) == nil)
            // The token coming back does not revive its old sessions.
            configured.set(["api:aaaaaa": .finance, "api:bbbbbb": .finance])
            #expect(try await sessions.find(cookie: removed) == nil)
            let ended = try await pool.withConnection { c in
                try c.query("SELECT count(*) FROM console_sessions WHERE signed_out_at IS NOT NULL").first!.decode(0, as: Int64.self)
            }
            #expect(ended == 2)
        }
    }

    @Test("the session row keeps the clock's times, not the database's")
    func timesComeFromTheClock() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let clock = TestClock(Self.start)
            let sessions = ConsoleSessions(pool: pool, clock: { clock.now }, tokenCheck: nil)
            _ = try await sessions.create(tokenName: "api:abc123", role: .finance)
            let row = try await pool.withConnection { c in
                try c.query("""
                    SELECT (extract(epoch FROM created_at) * 1000)::bigint, (extract(epoch FROM last_seen_at) * 1000)::bigint,
                           (extract(epoch FROM expires_at) * 1000)::bigint
                    FROM console_sessions
                    """).map { [try $0.decode(0, as: Int64.self), try $0.decode(1, as: Int64.self), try $0.decode(2, as: Int64.self)] }
            }
            #expect(row == [[Self.start, Self.start, Self.start + 8 * 60 * Self.minute]])
        }
    }
}

/// The configured tokens' names and roles, changed by the test as an operator would change
/// `LEDGER_API_TOKENS`.
final class ConfiguredTokens: Sendable {
    private let tokens: Mutex<[String: ConsoleRole]>

    init(_ tokens: [String: ConsoleRole]) { self.tokens = Mutex(tokens) }

    func set(_ tokens: [String: ConsoleRole]) { self.tokens.withLock { $0 = tokens } }

    func signsIn(_ name: String, as role: ConsoleRole) -> Bool { tokens.withLock { $0[name] == role } }
}
