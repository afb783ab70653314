#if canImport(FoundationEssentials)
// Foundation's core alone (no ICU): `Date`, `Data` and `JSONEncoder` are all this module takes.
import FoundationEssentials
#else
import Foundation
#endif

/// Milliseconds since 1970 (UTC) and durations in milliseconds, the unit of Apple's dates and of
/// every time the ledger records. One place for the conversions, so each rounds the same way
/// (down: a time is never reported later than it happened). Conversions only: the time itself
/// comes from a `WallClock`.
public enum Millis {
    /// `date` in milliseconds since 1970, UTC.
    public static func of(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// `duration` in whole milliseconds.
    public static func of(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
