/// A five-character SQLSTATE code reported by PostgreSQL, such as `"23505"` (unique violation).
///
/// See <https://www.postgresql.org/docs/15/errcodes-appendix.html>. The `~=` operator lets a
/// `catch` clause match on it directly: `catch SQLState.uniqueViolation { ... }`.
public struct SQLState: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// The two-character class, e.g. `"23"` for integrity constraint violations.
    public var errorClass: String { String(rawValue.prefix(2)) }

    // Class 08: connection exceptions.
    public static let connectionException: SQLState = "08000"
    public static let connectionDoesNotExist: SQLState = "08003"
    public static let connectionFailure: SQLState = "08006"
    // Class 22: data exceptions.
    public static let stringDataRightTruncation: SQLState = "22001"
    public static let numericValueOutOfRange: SQLState = "22003"
    public static let invalidDatetimeFormat: SQLState = "22007"
    public static let datetimeFieldOverflow: SQLState = "22008"
    public static let divisionByZero: SQLState = "22012"
    public static let characterNotInRepertoire: SQLState = "22021"
    public static let invalidTextRepresentation: SQLState = "22P02"
    public static let invalidParameterValue: SQLState = "22023"
    public static let untranslatableCharacter: SQLState = "22P05"
    // Class 23: integrity constraint violations.
    public static let integrityConstraintViolation: SQLState = "23000"
    public static let restrictViolation: SQLState = "23001"
    public static let notNullViolation: SQLState = "23502"
    public static let foreignKeyViolation: SQLState = "23503"
    public static let uniqueViolation: SQLState = "23505"
    public static let checkViolation: SQLState = "23514"
    public static let exclusionViolation: SQLState = "23P01"
    // Class 25: invalid transaction state.
    public static let activeSQLTransaction: SQLState = "25001"
    public static let readOnlySQLTransaction: SQLState = "25006"
    public static let inFailedSQLTransaction: SQLState = "25P02"
    // Class 28: invalid authorization.
    public static let invalidPassword: SQLState = "28P01"
    public static let invalidAuthorizationSpecification: SQLState = "28000"
    // Class 40: transaction rollback (retryable).
    public static let transactionRollback: SQLState = "40000"
    public static let serializationFailure: SQLState = "40001"
    public static let deadlockDetected: SQLState = "40P01"
    // Class 42: syntax errors and access rule violations.
    public static let insufficientPrivilege: SQLState = "42501"
    public static let syntaxError: SQLState = "42601"
    public static let undefinedColumn: SQLState = "42703"
    public static let undefinedFunction: SQLState = "42883"
    public static let undefinedTable: SQLState = "42P01"
    public static let undefinedObject: SQLState = "42704"
    public static let duplicateColumn: SQLState = "42701"
    public static let duplicateObject: SQLState = "42710"
    public static let duplicateTable: SQLState = "42P07"
    public static let duplicateSchema: SQLState = "42P06"
    public static let duplicateFunction: SQLState = "42723"
    public static let ambiguousColumn: SQLState = "42702"
    public static let datatypeMismatch: SQLState = "42804"
    public static let indeterminateDatatype: SQLState = "42P18"
    public static let wrongObjectType: SQLState = "42809"
    // Class 53/54: resources and limits.
    public static let insufficientResources: SQLState = "53000"
    public static let diskFull: SQLState = "53100"
    public static let outOfMemory: SQLState = "53200"
    public static let tooManyConnections: SQLState = "53300"
    public static let programLimitExceeded: SQLState = "54000"
    // Class 55: object not in prerequisite state.
    public static let objectInUse: SQLState = "55006"
    public static let lockNotAvailable: SQLState = "55P03"
    // Class 57: operator intervention.
    public static let queryCanceled: SQLState = "57014"
    public static let adminShutdown: SQLState = "57P01"
    public static let crashShutdown: SQLState = "57P02"
    public static let cannotConnectNow: SQLState = "57P03"
    // Class P0: PL/pgSQL.
    public static let raiseException: SQLState = "P0001"
    public static let noDataFound: SQLState = "P0002"
    public static let tooManyRows: SQLState = "P0003"
    public static let assertFailure: SQLState = "P0004"

    /// True for failures worth retrying the whole transaction for: serialization failures and
    /// deadlocks (class 40).
    public var isTransactionRollback: Bool { errorClass == "40" }

    /// True when the server says the session is gone or unusable: class 08, and shutdowns (57P0x).
    public var isConnectionClass: Bool {
        errorClass == "08" || self == .adminShutdown || self == .crashShutdown
            || self == .cannotConnectNow
            // A write on a server that is (now) a standby: after a failover the old primary comes
            // back read-only. The connection is of no use for writing; a new one, made with
            // `target_session_attrs=read-write`, finds the new primary.
            || self == .readOnlySQLTransaction
    }

    /// Matches an error carrying this SQLSTATE, so `catch SQLState.uniqueViolation` works.
    ///
    /// Looks through ``TransactionRollbackFailed`` to the error that caused the rollback.
    public static func ~= (pattern: SQLState, error: any Error) -> Bool {
        switch error {
        case let error as PostgresError: return error.sqlState == pattern
        case let error as TransactionRollbackFailed: return pattern ~= error.error
        default: return false
        }
    }
}
