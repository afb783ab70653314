import EventStore
import Postgres

/// A request the ledger refused or could not carry out, with a code the HTTP layer maps to a
/// status and the CLI to an exit code. `message` never holds receipts, tokens or secrets.
public struct LedgerServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Malformed input: 400 `invalid_request`.
        public static let invalidRequest = Code(rawValue: "invalid_request")
        public static let unknownProduct = Code(rawValue: "unknown_product")
        public static let notFound = Code(rawValue: "not_found")
        /// An erasure of a person the log recorded in clear, before erasure came: 409
        /// `recorded_before_erasure` (docs/erasure.md); nothing recorded.
        public static let recordedBeforeErasure = Code(rawValue: "recorded_before_erasure")
        /// A notification that cannot be authenticated: 401.
        public static let unauthenticated = Code(rawValue: "unauthenticated")
        /// PostgreSQL cannot be reached: 503 with Retry-After; nothing was recorded.
        public static let databaseUnavailable = Code(rawValue: "database_unavailable")
        /// The read models did not reach the log's head in time: 503.
        public static let projectionsBehind = Code(rawValue: "projections_behind")
        public static let invalidConfiguration = Code(rawValue: "invalid_configuration")
        /// The ledger lost a race with itself more times than it retries (concurrent decisions
        /// on the same streams): 503 with Retry-After. Never the client's fault, never a 400.
        public static let busy = Code(rawValue: "busy")
        /// The App Store Server API could not be asked now (down, rate limited): 503, try again.
        public static let appleUnavailable = Code(rawValue: "apple_unavailable")
        /// The ledger has no App Store Server API credentials: 501-like, a configuration matter.
        public static let appleNotConfigured = Code(rawValue: "apple_not_configured")
        /// A spend larger than the balance: 409 `insufficient_balance`; nothing recorded.
        public static let insufficientBalance = Code(rawValue: "insufficient_balance")
        /// An `Idempotency-Key` or `spend_id` used before for a different request: 409.
        public static let idempotencyConflict = Code(rawValue: "idempotency_conflict")
        /// Apple refused to extend a renewal date (its limits): 422, recorded, with Apple's reason.
        public static let extensionRefused = Code(rawValue: "extension_refused")
        /// A UUID the ledger never issued as an order's app account token: 422.
        public static let unknownAppAccountToken = Code(rawValue: "unknown_app_account_token")
        /// Another user holds the purchase and the transfer policy keeps it: 409.
        public static let ownedByAnotherUser = Code(rawValue: "owned_by_another_user")
        /// A Family Sharing member's transaction, which Apple never lets carry a token: 422.
        public static let familyShared = Code(rawValue: "family_shared")
        /// Apple refused the act (its code in the message), recorded: 422.
        public static let appleRefused = Code(rawValue: "apple_refused")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    /// Errors of the database layer that mean "PostgreSQL is not reachable now" become
    /// `databaseUnavailable`; others pass through unchanged.
    public static func mapping(_ error: any Error) -> any Error {
        if error is LedgerServiceError { return error }
        if error.isPostgresConnectionError { return LedgerServiceError(.databaseUnavailable, "PostgreSQL cannot be reached") }
        if let error = error as? PostgresError, error.code == .poolClosed || error.code == .connectionFailed {
            return LedgerServiceError(.databaseUnavailable, "PostgreSQL cannot be reached")
        }
        return error
    }
}

/// Runs `body`, turning "PostgreSQL is down" into `LedgerServiceError.databaseUnavailable`.
@discardableResult
package func mappingDatabaseErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw LedgerServiceError.mapping(error)
    }
}
