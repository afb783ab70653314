import Foundation
import Ledger
import LedgerQueries
import LedgerService
import Logging
import Postgres

/// Everything the console's pages read from: the same read models, reports and service the
/// HTTP API uses, so a figure on a screen is the figure the API and the CLI give.
public struct Console: Sendable {
    let reads: ReadModels
    let service: PurchaseService
    /// The primary's pool, for what is no read model: the webhook endpoints' standing
    /// (`WebhookStatus`), written by the deliverers as they go.
    let pool: ConnectionPool
    let sessions: ConsoleSessions
    let signIn: ConsoleSignIn
    let throttle: SignInThrottle
    let cookies: ConsoleCookies
    let commission: CommissionPlan
    let renderer: ConsoleRenderer
    let logger: Logger
    /// The console's "now", milliseconds since 1970: session times, sign-in limits, the
    /// revenue form's default days.
    let clock: @Sendable () -> Int64

    /// - Parameters:
    ///   - signIn: checks a token typed at sign-in.
    ///   - tokenCheck: whether a session's token is still configured with its role, asked on
    ///     every request; nil: sessions are not checked against the configured tokens.
    ///   - clock: for sessions and sign-in limits; nil: the service's machine clock. A person's
    ///     idle time and a guesser's pace are machine time, even where the ledger's own clock
    ///     is pinned to a simulated day (the tests, the demo); in `serve` both are the system's.
    ///   - signInLimits: wrong tokens taken before sign-in answers 429.
    public init(
        reads: ReadModels, service: PurchaseService, pool: ConnectionPool, signIn: @escaping ConsoleSignIn, insecureCookies: Bool,
        commission: CommissionPlan, logger: Logger, tokenCheck: ConsoleTokenCheck? = nil, clock: (@Sendable () -> Int64)? = nil,
        signInLimits: SignInLimits = .standard
    ) async throws {
        let clock = clock ?? service.machineClock.now
        self.reads = reads
        self.service = service
        self.pool = pool
        self.sessions = ConsoleSessions(pool: pool, clock: clock, tokenCheck: tokenCheck)
        self.signIn = signIn
        self.throttle = SignInThrottle(limits: signInLimits, clock: clock)
        self.cookies = ConsoleCookies(insecure: insecureCookies)
        self.commission = commission
        self.renderer = try await ConsoleRenderer()
        self.logger = logger
        self.clock = clock
    }

    public func routes<Context: ConsoleRequestContext>(context: Context.Type = Context.self) -> ConsoleRoutes<Context> {
        ConsoleRoutes(console: self)
    }
}
