/// What an append expects of its stream, checked by the database inside the append's
/// transaction: a mismatch is `EventStoreError.wrongExpectedVersion`, never an overwrite.
public enum ExpectedVersion: Sendable, Hashable {
    /// Append whatever the stream's version is.
    case any
    /// The stream must not exist yet: the first event becomes version 1. This is how a
    /// resource is claimed exactly once (e.g. one stream per Apple `transaction_id`).
    case noStream
    /// The stream's last event must have exactly this version (1-based).
    case exactly(Int64)

    /// The version the first appended event must get, or nil to let the database assign it.
    var firstVersion: Int64? {
        switch self {
        case .any: nil
        case .noStream: 1
        case .exactly(let version): version + 1
        }
    }
}
