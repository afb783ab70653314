/// The time of day, in milliseconds since 1970 (UTC), read through a closure given where a
/// process is put together: the one way the ledger learns what time it is.
///
/// Every date the ledger records or decides by (an order's `created_at_ms`, a subscription's
/// status "now", a reconciliation's window) comes from a `WallClock` it was handed; nothing below
/// the outermost construction (`serve`, the CLI's commands, benches, tests) reads the machine's
/// clock. `Primitives`, `AppStore` and `Ledger` cannot: `WallClock.system` lives in
/// `AppStoreClient`, which none of them can import. A test
/// fixes the clock (`.fixed`) or follows a simulated Apple's. Durations, time-outs and sleeps are
/// measured with `ContinuousClock`, not with this.
public struct WallClock: Sendable {
    /// Reads the clock: milliseconds since 1970, UTC.
    public var now: @Sendable () -> Int64

    /// A clock read by calling `now`.
    public init(_ now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    /// A clock stopped at `milliseconds` since 1970 (UTC).
    public static func fixed(_ milliseconds: Int64) -> WallClock {
        WallClock { milliseconds }
    }

    /// Reads the clock: `clock()` is `clock.now()`.
    public func callAsFunction() -> Int64 { now() }
}
