extension SimulatedStorefront {
    /// ISO 3166-1 alpha-2 by alpha-3 for the storefronts tests buy in: the simulator's six
    /// territories and the larger App Store storefronts. Taking the first two letters is wrong
    /// for many (AUT is AT, CHE CH, CHN CN, DEU DE, KOR KR, PRT PT, ZAF ZA), hence a table.
    static let alpha2ByAlpha3: [String: String] = [
        // The six territories of the simulator's price points.
        "USA": "US", "DEU": "DE", "FRA": "FR", "GBR": "GB", "JPN": "JP", "BRA": "BR",
        // Americas.
        "CAN": "CA", "MEX": "MX", "ARG": "AR", "CHL": "CL", "COL": "CO", "PER": "PE",
        // Europe.
        "AUT": "AT", "BEL": "BE", "BGR": "BG", "CHE": "CH", "CZE": "CZ", "DNK": "DK", "ESP": "ES", "EST": "EE",
        "FIN": "FI", "GRC": "GR", "HRV": "HR", "HUN": "HU", "IRL": "IE", "ISL": "IS", "ITA": "IT", "LTU": "LT",
        "LUX": "LU", "LVA": "LV", "NLD": "NL", "NOR": "NO", "POL": "PL", "PRT": "PT", "ROU": "RO", "SVK": "SK",
        "SVN": "SI", "SWE": "SE", "TUR": "TR", "UKR": "UA", "RUS": "RU",
        // Middle East and Africa.
        "ARE": "AE", "EGY": "EG", "ISR": "IL", "KEN": "KE", "NGA": "NG", "QAT": "QA", "SAU": "SA", "ZAF": "ZA",
        // Asia Pacific.
        "AUS": "AU", "CHN": "CN", "HKG": "HK", "IDN": "ID", "IND": "IN", "KAZ": "KZ", "KOR": "KR", "MYS": "MY",
        "NZL": "NZ", "PAK": "PK", "PHL": "PH", "SGP": "SG", "THA": "TH", "TWN": "TW", "VNM": "VN",
    ]

    /// The country App Store Connect's reports name a sale of `storefront` by (`Country Code`,
    /// `Country of Sale`): its ISO 3166-1 alpha-2 code. A storefront missing from
    /// `alpha2ByAlpha3` reads "US", the simulator's home storefront, rather than a guess that
    /// could name another real country.
    static func reportCountry(of storefront: String) -> String {
        alpha2ByAlpha3[storefront] ?? "US"
    }
}
