
/// The share of a purchase a revocation refunds, in thousandths of a percent as Apple states
/// `revocationPercentage` (25000 is 25%, 100000 all of it), and what that share is of an amount
/// of money or of a grant (docs/configuration.md "Money"). Integer arithmetic only.
/// https://developer.apple.com/documentation/appstoreserverapi/revocationpercentage
public enum RefundFraction {
    /// All of it: a full refund, and a refund for which Apple states no percentage.
    public static let whole: Int64 = 100_000

    /// The share of its money the revocation of `entry` refunds: none for a Family Sharing
    /// revocation (`FAMILY_REVOKE`: the family member paid nothing); Apple's
    /// `revocationPercentage` where it gives one (kept within 0...100000); all of it for a refund
    /// without one. An upgraded transaction's revocation refunds only the share Apple states
    /// (all of it for `REFUND_FULL`), none when it states nothing.
    public static func of(_ entry: EvidenceEntry) -> Int64 {
        if entry.isRevocation || entry.revocationType == .familyRevoke { return 0 }
        if let percentage = entry.revocationPercentage { return min(max(percentage, 0), whole) }
        if entry.isUpgraded { return entry.revocationType == .refundFull ? whole : 0 }
        return whole
    }

    /// `fractionMilli` of `minor` units of money, rounded half away from zero (half up for the
    /// positive amounts of sales): round-half-up(price × percentage / 100000).
    public static func money(_ minor: Int64, _ fractionMilli: Int64) -> Int64 {
        let magnitude = (abs(minor) * fractionMilli + whole / 2) / whole
        return minor < 0 ? -magnitude : magnitude
    }

    /// `fractionMilli` of a grant of `amount` units, rounded up: ceil(grant × percentage / 100000),
    /// so no part of the share Apple refunded is left with the customer.
    public static func units(_ amount: Int64, _ fractionMilli: Int64) -> Int64 {
        let magnitude = (abs(amount) * fractionMilli + whole - 1) / whole
        return amount < 0 ? -magnitude : magnitude
    }

    /// The share as people read it: "25%", "33.333%", "100%".
    public static func percentText(_ fractionMilli: Int64) -> String {
        let integer = fractionMilli / 1_000, rest = abs(fractionMilli % 1_000)
        guard rest != 0 else { return "\(integer)%" }
        var decimals = rest < 10 ? "00\(rest)" : (rest < 100 ? "0\(rest)" : "\(rest)")
        while decimals.hasSuffix("0") { decimals.removeLast() }
        return "\(integer).\(decimals)%"
    }
}
