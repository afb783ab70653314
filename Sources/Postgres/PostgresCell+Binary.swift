import Foundation

// PostgreSQL's binary output forms, for results asked for with `resultFormat: .binary`: no
// formatting on the server and no parsing here, which is what makes bulk reads cheap.

extension PostgresCell {
    /// A big-endian two's-complement integer of 2, 4 or 8 bytes (int2, int4, int8), narrowed
    /// to `T` when it fits.
    func binaryInteger<T: FixedWidthInteger>(as type: T.Type) throws -> T {
        let bytes = try requireBytes(for: T.self)
        let value: Int64
        switch bytes.count {
        case 2: value = Int64(Int16(bitPattern: UInt16(bigEndianBytes: bytes)))
        case 4: value = Int64(Int32(bitPattern: UInt32(bigEndianBytes: bytes)))
        case 8: value = Int64(bitPattern: UInt64(bigEndianBytes: bytes))
        default: throw decodingError(T.self, "a binary integer has 2, 4 or 8 bytes, not \(bytes.count)")
        }
        guard let narrowed = T(exactly: value) else { throw decodingError(T.self, "not an integer in range") }
        return narrowed
    }

    /// timestamp and timestamptz: microseconds since 2000-01-01 UTC; ±infinity at the extremes.
    func binaryTimestamp() throws -> PostgresTimestamp {
        let bytes = try requireBytes(for: PostgresTimestamp.self)
        guard bytes.count == 8 else { throw decodingError(PostgresTimestamp.self, "a binary timestamp has 8 bytes") }
        let sinceY2K = Int64(bitPattern: UInt64(bigEndianBytes: bytes))
        switch sinceY2K {
        case .max: return .infinity
        case .min: return .negativeInfinity
        default: return PostgresTimestamp(microsecondsSince1970: sinceY2K + 946_684_800_000_000)
        }
    }

    /// uuid: its 16 bytes.
    func binaryUUID() throws -> UUID {
        let bytes = try requireBytes(for: UUID.self)
        guard bytes.count == 16 else { throw decodingError(UUID.self, "a binary uuid has 16 bytes") }
        return UUID(sixteenBytes: bytes)
    }
}

extension FixedWidthInteger where Self: UnsignedInteger {
    /// Reads `Self.bitWidth / 8` big-endian bytes; the caller checked the count.
    init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        var value: Self = 0
        for byte in bytes { value = value << 8 | Self(byte) }
        self = value
    }
}

extension UUID {
    init(sixteenBytes b: ArraySlice<UInt8>) {
        let s = b.startIndex
        self.init(uuid: (
            b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6], b[s + 7],
            b[s + 8], b[s + 9], b[s + 10], b[s + 11], b[s + 12], b[s + 13], b[s + 14], b[s + 15]))
    }

    /// PostgreSQL's uuid text form (lower-case, 8-4-4-4-12), parsed without Foundation's
    /// scanf-based parser, too slow for a uuid in every row read (docs/benchmarks.md, 'Why the code
    /// is shaped so').
    init?(postgresText text: ArraySlice<UInt8>) {
        guard text.count == 36 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        var high: UInt8?
        for (offset, character) in text.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        self.init(sixteenBytes: bytes[...])
    }
}
