import Ledger
import LedgerStore

extension PurchaseService {
    /// The app a decision about `evidence` is made for: the one Apple's evidence names when this
    /// ledger serves it, else the first app served, for which the decider then refuses it
    /// (`bundle_id_mismatch`, naming the app the evidence named). The client's word never picks
    /// the app of a purchase: Apple's does.
    func app(of evidence: Evidence) -> String {
        evidence.bundleId.flatMap { configuration.apps.app($0)?.bundleId } ?? configuration.bundleId
    }

    /// Whether `evidence` is for an app this ledger serves (`AppCheck`).
    func serves(_ evidence: Evidence) -> Bool {
        AppCheck.refusal(of: evidence, servedApps: configuration.apps.bundleIds) == nil
    }
}

extension PurchaseService {
    /// The shared secrets of the apps after the first, each once and none the first's, in the
    /// order configured: what verifyReceipt is asked with after a 21004.
    var otherAppsSecrets: [String] {
        let first = configuration.apps.first.sharedSecret
        var seen: Set<String> = first.map { [$0] } ?? []
        return configuration.apps.apps.dropFirst().compactMap(\.sharedSecret).filter { !$0.isEmpty && seen.insert($0).inserted }
    }
}

extension PurchaseService {
    /// The app a command (an order, a spend, a consent) acts in: `named` when this ledger serves
    /// it, else the only app served. With several apps served, one must be named.
    public func app(named: String?) throws(LedgerServiceError) -> String {
        let apps = configuration.apps
        if let named = try apps.served(named) { return named }
        guard !apps.isSeveral else {
            throw LedgerServiceError(
                .invalidRequest, "bundle_id is required: this ledger serves several apps (\(apps.bundleIds.joined(separator: ", ")))")
        }
        return apps.first.bundleId
    }
}
