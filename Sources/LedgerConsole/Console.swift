import Foundation
import Ledger
import LedgerService
import Logging
import Postgres

/// Everything the console's pages read from: the same read models, reports and service the
/// HTTP API uses, so a figure on a screen is the figure the API and the CLI give.
public struct Console: Sendable {
    let reads: ReadModels
    let service: PurchaseService
    let sessions: ConsoleSessions
    let signIn: ConsoleSignIn
    let cookies: ConsoleCookies
    let commission: CommissionPlan
    let renderer: ConsoleRenderer
    let logger: Logger

    public init(
        reads: ReadModels, service: PurchaseService, pool: ConnectionPool, signIn: @escaping ConsoleSignIn, insecureCookies: Bool,
        commission: CommissionPlan, logger: Logger
    ) async throws {
        self.reads = reads
        self.service = service
        self.sessions = ConsoleSessions(pool: pool)
        self.signIn = signIn
        self.cookies = ConsoleCookies(insecure: insecureCookies)
        self.commission = commission
        self.renderer = try await ConsoleRenderer()
        self.logger = logger
    }

    public func routes<Context: ConsoleRequestContext>(context: Context.Type = Context.self) -> ConsoleRoutes<Context> {
        ConsoleRoutes(console: self)
    }
}
