/// Whether Apple's evidence is this app's: one rule for receipts, signed transactions,
/// notifications, the retry worker and imports, so no path is laxer than another.
public enum AppCheck {
    /// Why `evidence` is not for the app `bundleId`, or nil when it is. Evidence that names no
    /// app is refused too: nothing then proves the purchase was made in this app.
    public static func refusal(of evidence: Evidence, bundleId: String) -> String? {
        guard let named = evidence.bundleId else { return "Apple's answer names no bundle id" }
        return named == bundleId ? nil : "the receipt is for bundle \(named), not \(bundleId)"
    }
}
