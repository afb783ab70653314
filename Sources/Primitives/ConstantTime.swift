/// Comparison of secrets (shared secrets, token digests, session tokens) in time that depends on
/// their length only, never on where the first difference is. The one implementation: every
/// module that compares a secret calls this.
public enum ConstantTime {
    /// True when `a` and `b` hold the same bytes. Lengths are not secret: unequal lengths answer
    /// false at once.
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
