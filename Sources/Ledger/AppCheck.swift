/// Whether Apple's evidence is this app's: one rule for receipts, signed transactions,
/// notifications, the retry worker and imports, so no path is laxer than another.
public enum AppCheck {
    /// Why `evidence` is not for the app `bundleId`, or nil when it is. Evidence that names no
    /// app is refused too: nothing then proves the purchase was made in this app.
    public static func refusal(of evidence: Evidence, bundleId: String) -> String? {
        refusal(of: evidence, servedApps: [bundleId])
    }

    /// Why `evidence` is for none of the apps `bundleIds` served, or nil when it is for one.
    public static func refusal(of evidence: Evidence, servedApps bundleIds: [String]) -> String? {
        guard let named = evidence.bundleId else { return "Apple's answer names no bundle id" }
        if bundleIds.contains(named) { return nil }
        return bundleIds.count == 1
            ? "the receipt is for bundle \(named), not \(bundleIds[0])"
            : "the receipt is for bundle \(named), which is none of the apps this ledger serves (\(bundleIds.joined(separator: ", ")))"
    }
}
