import Primitives
import Testing

/// ISO 3166-1 alpha-2 (App Store Connect's reports) to alpha-3 (StoreKit's storefront, the
/// ledger's revenue key) and back. The table is not public, so every possible code is asked.
@Suite("Country codes, alpha-2 to alpha-3 and back")
struct ISO3166Tests {
    static let letters = Array(UInt8(ascii: "A")...UInt8(ascii: "Z"))

    /// Every two-letter upper-case code, `AA` … `ZZ` (676).
    static let everyAlpha2: [String] = letters.flatMap { first in letters.map { String(decoding: [first, $0], as: UTF8.self) } }

    /// Every three-letter upper-case code, `AAA` … `ZZZ` (17,576).
    static let everyAlpha3: [String] = letters.flatMap { first in
        letters.flatMap { second in letters.map { String(decoding: [first, second, $0], as: UTF8.self) } }
    }

    /// The (alpha-2, alpha-3) pairs the table holds, found by asking for every two-letter code.
    static let assigned: [(alpha2: String, alpha3: String)] = everyAlpha2.compactMap { code in
        ISO3166.alpha3(fromAlpha2: code).map { (alpha2: code, alpha3: $0) }
    }

    @Test("the table holds every officially assigned ISO 3166-1 code: 249")
    func count() {
        #expect(ISO3166.count == 249)
        #expect(Self.assigned.count == 249)
    }

    @Test("every entry round trips, alpha-2 to alpha-3 to alpha-2")
    func roundTrip() {
        for (alpha2, alpha3) in Self.assigned {
            #expect(alpha3.utf8.count == 3 && alpha3.utf8.allSatisfy { Self.letters.contains($0) }, "\(alpha2) → \(alpha3)")
            #expect(ISO3166.alpha2(fromAlpha3: alpha3) == alpha2, "\(alpha2) → \(alpha3)")
        }
    }

    @Test("the reverse table holds the same 249 codes and nothing else")
    func reverseHasNoExtras() {
        let found = Self.everyAlpha3.compactMap { code in ISO3166.alpha2(fromAlpha3: code).map { (code, $0) } }
        #expect(found.count == 249)
        for (alpha3, alpha2) in found {
            #expect(ISO3166.alpha3(fromAlpha2: alpha2) == alpha3, "\(alpha3) → \(alpha2)")
        }
    }

    @Test("no two alpha-2 codes map to the same alpha-3 code")
    func noSharedAlpha3() {
        let alpha3s = Self.assigned.map(\.alpha3)
        #expect(Set(alpha3s).count == alpha3s.count)
    }

    @Test("known pairs, both ways")
    func knownPairs() {
        let pairs = [
            ("AT", "AUT"), ("AU", "AUS"), ("BR", "BRA"), ("CH", "CHE"), ("CN", "CHN"), ("DE", "DEU"), ("ES", "ESP"), ("FR", "FRA"),
            ("GB", "GBR"), ("IE", "IRL"), ("JP", "JPN"), ("KR", "KOR"), ("MX", "MEX"), ("NL", "NLD"), ("US", "USA"), ("ZA", "ZAF"),
            ("SX", "SXM"), ("SS", "SSD"), ("BQ", "BES"), ("CW", "CUW"), ("RS", "SRB"), ("ME", "MNE"), ("TL", "TLS"), ("PS", "PSE"),
            ("AX", "ALA"), ("BL", "BLM"), ("MF", "MAF"), ("CA", "CAN"), ("TR", "TUR"), ("UA", "UKR"), ("KP", "PRK"), ("GS", "SGS"),
        ]
        for (alpha2, alpha3) in pairs {
            #expect(ISO3166.alpha3(fromAlpha2: alpha2) == alpha3, "\(alpha2)")
            #expect(ISO3166.alpha2(fromAlpha3: alpha3) == alpha2, "\(alpha3)")
        }
    }

    @Test("anything but two upper-case ASCII letters of an assigned code has no alpha-3")
    func rejectsAlpha2() {
        // "\u{212A}R" begins with the Kelvin sign, which Swift's String equality takes for `K`;
        // "ＵＳ" is in full-width letters; `XK` (Kosovo) is user-assigned, not ISO 3166-1.
        for code in ["us", "USA", "U1", "", "U", "Us", " US", "US ", "\u{212A}R", "ＵＳ", "XK", "AA", "ZZ"] {
            #expect(ISO3166.alpha3(fromAlpha2: code) == nil, "\(code.unicodeScalars.map(\.value))")
        }
    }

    @Test("anything but three upper-case ASCII letters of an assigned code has no alpha-2")
    func rejectsAlpha3() {
        for code in ["usa", "US", "USAA", "", "U1A", " USA", "\u{212A}OR", "XKS", "AAA"] {
            #expect(ISO3166.alpha2(fromAlpha3: code) == nil, "\(code.unicodeScalars.map(\.value))")
        }
    }
}
