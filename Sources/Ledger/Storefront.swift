/// A sale's country: the App Store storefront Apple signed with it (`storefront`, ISO 3166-1
/// alpha-3: `USA`, `DEU`), checked on the way in as currencies are (`ISO4217`), so a value such
/// as `=1+2` never becomes a report's key or a CSV cell.
/// https://developer.apple.com/documentation/appstoreserverapi/storefront
public enum Storefront {
    /// The country key of sales whose storefront Apple never stated (a receipt carries none).
    public static let unknown = "unknown"

    /// `text` when it is exactly three upper-case ASCII letters, as Apple writes storefronts;
    /// nil otherwise (absent, lower case, longer, or anything else).
    public static func countryCode(_ text: String?) -> String? {
        guard let text, text.utf8.count == 3, text.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else { return nil }
        return text
    }
}
