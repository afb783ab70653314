/// Country codes between ISO 3166-1's two forms. App Store Connect's sales and financial reports
/// name a sale's country in alpha-2 (`Country Code`, `Country of Sale`: `US`, `DE`), while
/// StoreKit's and the App Store Server API's `storefront` is alpha-3 (`USA`, `DEU`, see
/// `Storefront`); the ledger keys revenue by alpha-3, so a report's country is turned into it
/// before the two are compared.
///
/// The table is every officially assigned code of ISO 3166-1 (249), as the ISO 3166 Maintenance
/// Agency publishes them (https://www.iso.org/iso-3166-country-codes.html). Kosovo's `XK`/`XKS`
/// is left out: it is a user-assigned code, not an ISO 3166-1 one, even where others use it.
public enum ISO3166 {
    /// Every officially assigned ISO 3166-1 code, as (alpha-2, alpha-3), sorted by alpha-2.
    static let pairs: [(alpha2: String, alpha3: String)] = [
        ("AD", "AND"), ("AE", "ARE"), ("AF", "AFG"), ("AG", "ATG"), ("AI", "AIA"), ("AL", "ALB"), ("AM", "ARM"), ("AO", "AGO"),
        ("AQ", "ATA"), ("AR", "ARG"), ("AS", "ASM"), ("AT", "AUT"), ("AU", "AUS"), ("AW", "ABW"), ("AX", "ALA"), ("AZ", "AZE"),
        ("BA", "BIH"), ("BB", "BRB"), ("BD", "BGD"), ("BE", "BEL"), ("BF", "BFA"), ("BG", "BGR"), ("BH", "BHR"), ("BI", "BDI"),
        ("BJ", "BEN"), ("BL", "BLM"), ("BM", "BMU"), ("BN", "BRN"), ("BO", "BOL"), ("BQ", "BES"), ("BR", "BRA"), ("BS", "BHS"),
        ("BT", "BTN"), ("BV", "BVT"), ("BW", "BWA"), ("BY", "BLR"), ("BZ", "BLZ"), ("CA", "CAN"), ("CC", "CCK"), ("CD", "COD"),
        ("CF", "CAF"), ("CG", "COG"), ("CH", "CHE"), ("CI", "CIV"), ("CK", "COK"), ("CL", "CHL"), ("CM", "CMR"), ("CN", "CHN"),
        ("CO", "COL"), ("CR", "CRI"), ("CU", "CUB"), ("CV", "CPV"), ("CW", "CUW"), ("CX", "CXR"), ("CY", "CYP"), ("CZ", "CZE"),
        ("DE", "DEU"), ("DJ", "DJI"), ("DK", "DNK"), ("DM", "DMA"), ("DO", "DOM"), ("DZ", "DZA"), ("EC", "ECU"), ("EE", "EST"),
        ("EG", "EGY"), ("EH", "ESH"), ("ER", "ERI"), ("ES", "ESP"), ("ET", "ETH"), ("FI", "FIN"), ("FJ", "FJI"), ("FK", "FLK"),
        ("FM", "FSM"), ("FO", "FRO"), ("FR", "FRA"), ("GA", "GAB"), ("GB", "GBR"), ("GD", "GRD"), ("GE", "GEO"), ("GF", "GUF"),
        ("GG", "GGY"), ("GH", "GHA"), ("GI", "GIB"), ("GL", "GRL"), ("GM", "GMB"), ("GN", "GIN"), ("GP", "GLP"), ("GQ", "GNQ"),
        ("GR", "GRC"), ("GS", "SGS"), ("GT", "GTM"), ("GU", "GUM"), ("GW", "GNB"), ("GY", "GUY"), ("HK", "HKG"), ("HM", "HMD"),
        ("HN", "HND"), ("HR", "HRV"), ("HT", "HTI"), ("HU", "HUN"), ("ID", "IDN"), ("IE", "IRL"), ("IL", "ISR"), ("IM", "IMN"),
        ("IN", "IND"), ("IO", "IOT"), ("IQ", "IRQ"), ("IR", "IRN"), ("IS", "ISL"), ("IT", "ITA"), ("JE", "JEY"), ("JM", "JAM"),
        ("JO", "JOR"), ("JP", "JPN"), ("KE", "KEN"), ("KG", "KGZ"), ("KH", "KHM"), ("KI", "KIR"), ("KM", "COM"), ("KN", "KNA"),
        ("KP", "PRK"), ("KR", "KOR"), ("KW", "KWT"), ("KY", "CYM"), ("KZ", "KAZ"), ("LA", "LAO"), ("LB", "LBN"), ("LC", "LCA"),
        ("LI", "LIE"), ("LK", "LKA"), ("LR", "LBR"), ("LS", "LSO"), ("LT", "LTU"), ("LU", "LUX"), ("LV", "LVA"), ("LY", "LBY"),
        ("MA", "MAR"), ("MC", "MCO"), ("MD", "MDA"), ("ME", "MNE"), ("MF", "MAF"), ("MG", "MDG"), ("MH", "MHL"), ("MK", "MKD"),
        ("ML", "MLI"), ("MM", "MMR"), ("MN", "MNG"), ("MO", "MAC"), ("MP", "MNP"), ("MQ", "MTQ"), ("MR", "MRT"), ("MS", "MSR"),
        ("MT", "MLT"), ("MU", "MUS"), ("MV", "MDV"), ("MW", "MWI"), ("MX", "MEX"), ("MY", "MYS"), ("MZ", "MOZ"), ("NA", "NAM"),
        ("NC", "NCL"), ("NE", "NER"), ("NF", "NFK"), ("NG", "NGA"), ("NI", "NIC"), ("NL", "NLD"), ("NO", "NOR"), ("NP", "NPL"),
        ("NR", "NRU"), ("NU", "NIU"), ("NZ", "NZL"), ("OM", "OMN"), ("PA", "PAN"), ("PE", "PER"), ("PF", "PYF"), ("PG", "PNG"),
        ("PH", "PHL"), ("PK", "PAK"), ("PL", "POL"), ("PM", "SPM"), ("PN", "PCN"), ("PR", "PRI"), ("PS", "PSE"), ("PT", "PRT"),
        ("PW", "PLW"), ("PY", "PRY"), ("QA", "QAT"), ("RE", "REU"), ("RO", "ROU"), ("RS", "SRB"), ("RU", "RUS"), ("RW", "RWA"),
        ("SA", "SAU"), ("SB", "SLB"), ("SC", "SYC"), ("SD", "SDN"), ("SE", "SWE"), ("SG", "SGP"), ("SH", "SHN"), ("SI", "SVN"),
        ("SJ", "SJM"), ("SK", "SVK"), ("SL", "SLE"), ("SM", "SMR"), ("SN", "SEN"), ("SO", "SOM"), ("SR", "SUR"), ("SS", "SSD"),
        ("ST", "STP"), ("SV", "SLV"), ("SX", "SXM"), ("SY", "SYR"), ("SZ", "SWZ"), ("TC", "TCA"), ("TD", "TCD"), ("TF", "ATF"),
        ("TG", "TGO"), ("TH", "THA"), ("TJ", "TJK"), ("TK", "TKL"), ("TL", "TLS"), ("TM", "TKM"), ("TN", "TUN"), ("TO", "TON"),
        ("TR", "TUR"), ("TT", "TTO"), ("TV", "TUV"), ("TW", "TWN"), ("TZ", "TZA"), ("UA", "UKR"), ("UG", "UGA"), ("UM", "UMI"),
        ("US", "USA"), ("UY", "URY"), ("UZ", "UZB"), ("VA", "VAT"), ("VC", "VCT"), ("VE", "VEN"), ("VG", "VGB"), ("VI", "VIR"),
        ("VN", "VNM"), ("VU", "VUT"), ("WF", "WLF"), ("WS", "WSM"), ("YE", "YEM"), ("YT", "MYT"), ("ZA", "ZAF"), ("ZM", "ZMB"),
        ("ZW", "ZWE"),
    ]

    /// Alpha-3 by alpha-2, built on first use.
    static let alpha3ByAlpha2: [String: String] = Dictionary(uniqueKeysWithValues: pairs.map { ($0.alpha2, $0.alpha3) })

    /// Alpha-2 by alpha-3, built on first use.
    static let alpha2ByAlpha3: [String: String] = Dictionary(uniqueKeysWithValues: pairs.map { ($0.alpha3, $0.alpha2) })

    /// How many codes the table holds (249).
    public static var count: Int { pairs.count }

    /// The ISO 3166-1 alpha-3 code of `code` (`US` → `USA`), when `code` is exactly two
    /// upper-case ASCII letters assigned by ISO 3166-1; nil otherwise (lower case, `XK`, …).
    public static func alpha3(fromAlpha2 code: String) -> String? {
        guard isUpperASCII(code, length: 2) else { return nil }
        return alpha3ByAlpha2[code]
    }

    /// The ISO 3166-1 alpha-2 code of `code` (`USA` → `US`), when `code` is exactly three
    /// upper-case ASCII letters assigned by ISO 3166-1; nil otherwise.
    public static func alpha2(fromAlpha3 code: String) -> String? {
        guard isUpperASCII(code, length: 3) else { return nil }
        return alpha2ByAlpha3[code]
    }

    /// Whether `text` is exactly `length` bytes of `A`…`Z`. Checked on the bytes because String
    /// equality is canonical equivalence: the Kelvin sign U+212A equals `K`, so `"\u{212A}R"`
    /// would otherwise find `KR`.
    private static func isUpperASCII(_ text: String, length: Int) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }
}
