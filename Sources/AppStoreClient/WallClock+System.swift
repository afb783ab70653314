import Foundation
import Primitives

extension WallClock {
    /// This machine's clock. Taken only where a process is put together (`serve`, the CLI's
    /// commands, benches, tests); everything below is handed a clock. It lives here, beside the
    /// clients that talk to Apple, so that `AppStore` and `Ledger` cannot read the time.
    public static let system = WallClock { Millis.of(Date()) }
}
