import Foundation

extension NewEvent {
    /// A fresh event id: a random (version 4) UUID from the system's generator (`getrandom`
    /// on Linux), the default for every new event.
    ///
    /// Foundation's `UUID()` on Linux opens and reads `/dev/urandom` for every id, one `open`
    /// per appended event; `getrandom` needs none (BENCHMARKS.md, 'Why the code is shaped so').
    public static func makeID() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
            return UUID(uuid: (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        }
    }
}
