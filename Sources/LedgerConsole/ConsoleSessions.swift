import Crypto
import Foundation
import Postgres

/// A signed-in console user.
struct ConsoleSession: Sendable, Hashable {
    var tokenName: String
    var role: ConsoleRole
    /// Every form that changes something carries it; a POST without it is refused.
    var csrfToken: String
}

/// Console sessions in PostgreSQL (`console_sessions`, migration 0015), so every server of a
/// deployment knows them and signing out ends them everywhere. The cookie holds 32 random bytes;
/// the table holds their sha256 only.
struct ConsoleSessions: Sendable {
    let pool: ConnectionPool
    /// How long a session lasts from sign-in; no sliding renewal, so a stolen cookie expires.
    static let lifetime: Duration = .seconds(8 * 3600)

    /// A new session; returns the cookie's value.
    func create(tokenName: String, role: ConsoleRole) async throws -> (cookie: String, session: ConsoleSession) {
        let id = Self.randomToken()
        let session = ConsoleSession(tokenName: tokenName, role: role, csrfToken: Self.randomToken())
        let seconds = Int64(Self.lifetime.components.seconds)
        let digest = Self.digest(id)
        try await pool.withConnection { connection in
            // Expired sessions go as new ones come, so the table stays the size of the team.
            _ = try connection.execute("DELETE FROM console_sessions WHERE expires_at < now() - interval '1 day'")
            _ = try connection.execute("""
                INSERT INTO console_sessions (id_sha256, token_name, role, csrf_token, expires_at)
                VALUES (\(digest), \(tokenName), \(role.rawValue), \(session.csrfToken), now() + make_interval(secs => \(seconds)))
                """)
        }
        return (id, session)
    }

    /// The live session a cookie names, or nil (unknown, expired or signed out).
    func find(cookie: String) async throws -> ConsoleSession? {
        guard cookie.count == 43, cookie.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else { return nil }
        let digest = Self.digest(cookie)
        return try await pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT token_name, role, csrf_token FROM console_sessions
                WHERE id_sha256 = \(digest) AND expires_at > now() AND signed_out_at IS NULL
                """).first, let role = ConsoleRole(rawValue: try row.decode(1))
            else { return nil }
            return ConsoleSession(tokenName: try row.decode(0), role: role, csrfToken: try row.decode(2))
        }
    }

    func signOut(cookie: String) async throws {
        let digest = Self.digest(cookie)
        try await pool.withConnection { connection in
            _ = try connection.execute("UPDATE console_sessions SET signed_out_at = now() WHERE id_sha256 = \(digest) AND signed_out_at IS NULL")
        }
    }

    static func digest(_ cookie: String) -> [UInt8] { Array(SHA256.hash(data: Array(cookie.utf8))) }

    /// 32 bytes from the system's CSPRNG, base64url without padding (43 characters).
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Equal strings, compared in time independent of where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for (p, q) in zip(x, y) { difference |= p ^ q }
        return difference == 0
    }
}
