import AppStore
import Crypto
import Foundation
import Primitives

extension AppleSimulator {
    /// How a simulator is set up. Every field has a default fit for tests and the demo.
    public struct Configuration: Sendable {
        /// `bundle_id` of the app whose receipts the simulator issues (`APPLE_BUNDLE_ID`).
        public var bundleId: String = "com.example.app"
        /// The app's Apple id: `adam_id` in production receipts, `appAppleId` in v2 notifications.
        public var appAppleId: Int64 = 1234
        /// `bvrs` / `bundleVersion` in notifications.
        public var bundleVersion: String = "1.0"
        /// The shared secret (`APPLE_SHARED_SECRET`); when set, verifyReceipt with another
        /// `password` answers 21004, and v1 notifications carry it. Nil: any password passes.
        public var sharedSecret: String?
        /// What the store sells.
        public var products: [SimulatedProduct] = SimulatedProduct.defaultCatalog
        /// The machine's clock, handed in where the process is put together (`WallClock.system`,
        /// as for the ledger; docs/design-notes.md, "One clock"): what must follow real time
        /// whatever the simulated clock says. Server API and App Store Connect tokens are made by
        /// a real client on real time; a Finish Transaction or Send Consumption call is recorded
        /// with when it arrived; the certificate authority is valid from the earlier of it and
        /// `start`; and `start` defaults to it.
        public var machineClock: WallClock
        /// Where the simulated clock starts; default: `machineClock` at `init`, in whole seconds.
        public var start: Date
        /// Seed of every random choice (shuffles, failure fractions): same seed, same answers.
        public var seed: UInt64 = 1
        /// Added to where transaction and web order line item ids start, so a simulator meeting a
        /// ledger another simulator filled (the upgrade test after the previous release's demo)
        /// hands out ids that ledger has not seen.
        public var idOffset: Int64 = 0
        /// Where to post notifications (the ledger's `/v1/notifications/apple`); nil: build and
        /// keep them (see `sentNotifications`) without posting.
        public var notificationURL: String?
        /// Which formats to send; Apple sends one per app, the simulator may send both.
        public var notificationVersions: Set<NotificationVersion> = [.v2]
        /// How long one notification post may take before it counts as failed.
        public var notificationTimeout: Duration = .seconds(5)
        /// What the App Store Server API (`/inApps/...`) accepts as the `Authorization: Bearer`
        /// JWT; nil: every Server API call answers 401, as Apple does for a key it does not know.
        public var serverAPI: ServerAPIAuthentication?
        /// The P-256 public key (PEM) of the App Store Connect API key whose JWTs the price-point
        /// endpoints (`/v2/inAppPurchases/{id}/pricePoints`, `/v1/subscriptions/{id}/pricePoints`)
        /// accept; nil: every such call answers 401 `NOT_AUTHORIZED`. A different key from
        /// `serverAPI`'s, as at Apple.
        public var connectPublicKeyPEM: String?
        /// The header `kid` App Store Connect tokens must carry; nil: any.
        public var connectKeyId: String?
        /// The `iss` App Store Connect tokens must carry; nil: any (one must be present).
        public var connectIssuerId: String?
        /// VAT/GST changes on the simulated clock: from each one's date, the price points of its
        /// territory pay proceeds at its rate (`PriceTerritory.all` holds the rates before), and
        /// so do the App Store Connect reports' sales bought in it from that date.
        public var taxChanges: [TaxChange] = []
        /// How many Get Status of Subscription Renewal Date Extensions calls answer
        /// `complete: false` before a mass extension runs: the next call runs it and answers
        /// `complete: true`, so a client has to poll as with Apple's (which may take hours).
        /// Calls answered by an injected failure (a 429) do not count. A mass extension also
        /// runs when the simulated clock next moves forward, whatever the count. 0: the first
        /// status call completes it.
        public var massExtensionIncompleteStatusCalls: Int = 2

        /// Defaults fit for tests and the demo, the simulated clock starting at `machineClock`'s now.
        public init(machineClock: WallClock) {
            self.machineClock = machineClock
            self.start = Date(timeIntervalSince1970: Double(machineClock() / 1000))
        }

        /// The configuration the ledger's own variables imply (`docs/configuration.md`): `APPLE_BUNDLE_ID`,
        /// `APPLE_SHARED_SECRET`, plus `APPLE_SIMULATOR_NOTIFICATION_URL`,
        /// `APPLE_SIMULATOR_NOTIFICATION_VERSIONS` ("v1,v2"), `APPLE_SIMULATOR_SEED` and
        /// `APPLE_SIMULATOR_OTHER_BUNDLE_IDS` (the team's other apps, for the Server API).
        ///
        /// With the ledger's Server API credentials (`APPLE_ISSUER_ID`, `APPLE_KEY_ID`, and
        /// `APPLE_PRIVATE_KEY`, the path of the `.p8` key) the Server API accepts the ledger's
        /// JWTs; the public key is derived from that file. Without them, or when the file cannot
        /// be read as a P-256 key, `serverAPI` stays nil and the Server API answers 401.
        public init(environment: [String: String], machineClock: WallClock) {
            self.init(machineClock: machineClock)
            if let bundleId = environment["APPLE_BUNDLE_ID"], !bundleId.isEmpty { self.bundleId = bundleId }
            if let secret = environment["APPLE_SHARED_SECRET"], !secret.isEmpty { sharedSecret = secret }
            if let url = environment["APPLE_SIMULATOR_NOTIFICATION_URL"], !url.isEmpty { notificationURL = url }
            if let versions = environment["APPLE_SIMULATOR_NOTIFICATION_VERSIONS"] {
                let parsed = versions.split(separator: ",").compactMap {
                    NotificationVersion(rawValue: $0.trimmingCharacters(in: .whitespaces).lowercased())
                }
                if !parsed.isEmpty { notificationVersions = Set(parsed) }
            }
            if let seed = environment["APPLE_SIMULATOR_SEED"].flatMap(UInt64.init) { self.seed = seed }
            if let issuerId = environment["APPLE_ISSUER_ID"], !issuerId.isEmpty,
                let keyId = environment["APPLE_KEY_ID"], !keyId.isEmpty,
                let path = environment["APPLE_PRIVATE_KEY"], !path.isEmpty,
                let pem = try? String(contentsOfFile: path, encoding: .utf8)
            {
                serverAPI = try? ServerAPIAuthentication(
                    privateKeyPEM: pem, issuerId: issuerId, keyId: keyId, bundleId: bundleId)
                // The team's other apps (comma-separated), which the key asks about too.
                let others = environment["APPLE_SIMULATOR_OTHER_BUNDLE_IDS"]?.split(separator: ",")
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
                serverAPI?.otherBundleIds = Set(others)
            }
            // The App Store Connect key (price points): `APPLE_CONNECT_PRIVATE_KEY` (path of its
            // `.p8`; the public key is derived), `APPLE_CONNECT_KEY_ID`, `APPLE_CONNECT_ISSUER_ID`.
            if let path = environment["APPLE_CONNECT_PRIVATE_KEY"], !path.isEmpty,
                let pem = try? String(contentsOfFile: path, encoding: .utf8),
                let key = try? P256.Signing.PrivateKey(pemRepresentation: pem)
            {
                connectPublicKeyPEM = key.publicKey.pemRepresentation
                connectKeyId = environment["APPLE_CONNECT_KEY_ID"].flatMap { $0.isEmpty ? nil : $0 }
                connectIssuerId = environment["APPLE_CONNECT_ISSUER_ID"].flatMap { $0.isEmpty ? nil : $0 }
            }
        }
    }
}
