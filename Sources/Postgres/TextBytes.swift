#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte scans of statement texts (and names and scripts, so there is one check), which run on
/// every execution: over the contiguous UTF-8 of a native string they are one tight loop (or
/// one memchr), where iterating `utf8` generically costs too much at that rate (docs/benchmarks.md,
/// 'Why the code is shaped so').
extension String {
    /// Whether the text holds a NUL byte, which C strings and PostgreSQL text cannot carry.
    var holdsNUL: Bool {
        let found = utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
        return found ?? utf8.contains(0)
    }

    /// FNV-1a (64 bits) of the UTF-8 bytes: stable across processes, unlike `hashValue`.
    var fnv1a: UInt64 {
        utf8.withContiguousStorageIfAvailable { Self.fnv1a(of: $0) } ?? Self.fnv1a(of: utf8)
    }

    private static func fnv1a(of bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
