import Crypto
import Foundation
import Postgres
import Primitives

/// A signed-in console user.
struct ConsoleSession: Sendable, Hashable {
    /// The name of the token signed in with (`api:` and the first 6 hex digits of its sha256):
    /// its fingerprint, checked against the configured tokens on every request.
    var tokenName: String
    var role: ConsoleRole
    /// Every form that changes something carries it; a POST without it is refused.
    var csrfToken: String
}

/// Console sessions in PostgreSQL (`console_sessions`, migrations 0015 and 0017), so every
/// server of a deployment knows them and signing out ends them everywhere. The cookie holds 32
/// random bytes; the table holds their sha256 only.
///
/// A session ends, for good, at the first of:
/// - sign-out;
/// - 8 hours after sign-in (`lifetime`; no sliding renewal, so a stolen cookie expires);
/// - 30 minutes without a request (`idleTimeout`);
/// - a request on a server where its token is no longer configured, or no longer with the
///   scope it signed in with (`tokenCheck`).
/// Times are the console's clock (milliseconds since 1970), never the database's `now()`.
struct ConsoleSessions: Sendable {
    let pool: ConnectionPool
    let clock: @Sendable () -> Int64
    /// Whether the session's token is still configured with its role; nil: not checked.
    let tokenCheck: ConsoleTokenCheck?

    /// How long a session lasts from sign-in at most.
    static let lifetime: Duration = .seconds(8 * 3600)
    /// How long a session lasts without a request.
    static let idleTimeout: Duration = .seconds(30 * 60)

    /// A new session; returns the cookie's value.
    func create(tokenName: String, role: ConsoleRole) async throws -> (cookie: String, session: ConsoleSession) {
        let id = Self.randomToken()
        let session = ConsoleSession(tokenName: tokenName, role: role, csrfToken: Self.randomToken())
        let now = clock()
        let digest = Self.digest(id)
        let (signedIn, expires, purgeBefore) = (Self.timestamp(now), Self.timestamp(now + Millis.of(Self.lifetime)), Self.timestamp(now - 86_400_000))
        try await pool.withConnection { connection in
            // Sessions ended a day ago go as new ones come, so the table stays the size of the team.
            _ = try connection.execute("""
                DELETE FROM console_sessions
                WHERE expires_at < \(purgeBefore) OR last_seen_at < \(purgeBefore) OR signed_out_at < \(purgeBefore)
                """)
            _ = try connection.execute("""
                INSERT INTO console_sessions (id_sha256, token_name, role, csrf_token, created_at, last_seen_at, expires_at)
                VALUES (\(digest), \(tokenName), \(role.rawValue), \(session.csrfToken), \(signedIn), \(signedIn), \(expires))
                """)
        }
        return (id, session)
    }

    /// The live session a cookie names, or nil (unknown, signed out, expired, idle too long,
    /// or its token removed or changed). Finding it counts as its latest request.
    func find(cookie: String) async throws -> ConsoleSession? {
        guard cookie.count == 43, cookie.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        let digest = Self.digest(cookie)
        let now = clock()
        let (at, idleSince) = (Self.timestamp(now), Self.timestamp(now - Millis.of(Self.idleTimeout)))
        let tokenCheck = self.tokenCheck
        return try await pool.withConnection { connection -> ConsoleSession? in
            // Every page a session shows passes here, so its commit does not wait for the WAL's
            // flush: a crash that loses the touch only makes the session idle a little sooner.
            // A sign-out below is durable.
            guard let row = try connection.pipeline([.commitWithoutWaitingForFlush, """
                UPDATE console_sessions SET last_seen_at = \(at)
                WHERE id_sha256 = \(digest) AND signed_out_at IS NULL AND expires_at > \(at) AND last_seen_at > \(idleSince)
                RETURNING token_name, role, csrf_token
                """])[1].first, let role = ConsoleRole(rawValue: try row.decode(1))
            else { return nil }
            let session = ConsoleSession(tokenName: try row.decode(0), role: role, csrfToken: try row.decode(2))
            if let tokenCheck, !tokenCheck(session.tokenName, session.role) {
                // Removed from LEDGER_API_TOKENS or given another scope: over for good, on
                // every server, even if the token comes back.
                _ = try connection.execute("UPDATE console_sessions SET signed_out_at = \(at) WHERE id_sha256 = \(digest)")
                return nil
            }
            return session
        }
    }

    func signOut(cookie: String) async throws {
        let digest = Self.digest(cookie)
        let at = Self.timestamp(clock())
        try await pool.withConnection { connection in
            _ = try connection.execute("UPDATE console_sessions SET signed_out_at = \(at) WHERE id_sha256 = \(digest) AND signed_out_at IS NULL")
        }
    }

    static func digest(_ cookie: String) -> [UInt8] { Array(SHA256.hash(data: Array(cookie.utf8))) }

    /// 32 bytes from the system's CSPRNG, base64url without padding (43 characters).
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(Data(bytes))
    }

    /// Whole seconds of `duration`, for a cookie's Max-Age.
    static func seconds(_ duration: Duration) -> Int { Int(duration.components.seconds) }


    private static func timestamp(_ milliseconds: Int64) -> PostgresTimestamp {
        PostgresTimestamp(microsecondsSince1970: milliseconds * 1_000)
    }
}
