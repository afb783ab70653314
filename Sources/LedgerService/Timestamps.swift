import Ledger

/// How the ledger writes instants for people and APIs.
public enum Timestamps {
    /// Milliseconds since 1970 → `2026-11-23T08:00:00.000Z` (UTC, ISO 8601).
    public static func iso8601(_ milliseconds: Int64) -> String {
        RevenueDay.iso8601(milliseconds)
    }
}
