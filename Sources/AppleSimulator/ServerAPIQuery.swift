import AppStore
import Foundation
import Primitives

/// The opaque paging tokens of the Server API: `revision` (transaction and refund history) and
/// `paginationToken` (notification history).
///
/// Inside is a position, base64url-encoded so it travels in a query string unescaped: for
/// history, a place in the order of last change (`SimulatorState.modificationOrder`); for
/// notifications, an index in the append-only list of notifications sent.
enum PageToken {
    static func encode(_ position: Int64) -> String {
        Base64URL.encode(Data("p\(position)".utf8))
    }

    /// The position in `token`; nil when the simulator did not make it.
    static func decode(_ token: String) -> Int64? {
        guard let data = Base64URL.decode(token), let text = String(data: data, encoding: .utf8),
            text.first == "p", let position = Int64(text.dropFirst()), position >= 0
        else { return nil }
        return position
    }
}

/// What a Get Transaction History request asks for: Apple's query parameters, parsed.
///
/// A transaction is listed when its `purchaseDate` is in `startDate ..< endDate`, its product
/// is one of `productId` and of `productType` (each repeatable), its group one of
/// `subscriptionGroupIdentifier`, and its revocation matches `revoked`. The simulator has no
/// Family Sharing, so every transaction is `PURCHASED`.
/// See https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history
struct HistoryQuery: Sendable {
    var startMs: Int64?
    var endMs: Int64?
    var productIds: Set<String> = []
    var kinds: Set<SimulatedProduct.Kind> = []
    var subscriptionGroups: Set<String> = []
    var revoked: Bool?
    var ownershipType: String?
    var descending = false
    /// Resume after this position (from `revision`); nil: from the start.
    var after: Int64?

    /// Parses Apple's parameters; a value Apple would refuse throws its `ServerAPIError`.
    init(parameters: [String: [String]]) throws {
        if let text = parameters["startDate"]?.last {
            guard let value = Int64(text) else { throw ServerAPIError.invalidStartDate }
            startMs = value
        }
        if let text = parameters["endDate"]?.last {
            guard let value = Int64(text) else { throw ServerAPIError.invalidEndDate }
            endMs = value
        }
        if let startMs, let endMs, startMs >= endMs { throw ServerAPIError.startDateAfterEndDate }
        productIds = Set(parameters["productId"] ?? [])
        for text in parameters["productType"] ?? [] {
            guard let kind = Self.kinds[text] else { throw ServerAPIError.invalidProductType }
            kinds.insert(kind)
        }
        subscriptionGroups = Set(parameters["subscriptionGroupIdentifier"] ?? [])
        if let text = parameters["revoked"]?.last {
            guard let value = Bool(text) else { throw ServerAPIError.invalidRevoked }
            revoked = value
        }
        if let text = parameters["inAppOwnershipType"]?.last {
            guard text == "PURCHASED" || text == "FAMILY_SHARED" else { throw ServerAPIError.invalidInAppOwnershipType }
            ownershipType = text
        }
        switch parameters["sort"]?.last {
        case nil, "ASCENDING"?: descending = false
        case "DESCENDING"?: descending = true
        default: throw ServerAPIError.invalidSort
        }
        after = try Self.position(parameters["revision"]?.last)
    }

    /// Apple's `productType` values.
    static let kinds: [String: SimulatedProduct.Kind] = [
        "AUTO_RENEWABLE": .autoRenewable, "NON_RENEWABLE": .nonRenewing, "CONSUMABLE": .consumable,
        "NON_CONSUMABLE": .nonConsumable,
    ]

    /// The position a `revision` names; nil when none was sent.
    static func position(_ revision: String?) throws -> Int64? {
        guard let revision else { return nil }
        guard let position = PageToken.decode(revision) else { throw ServerAPIError.invalidRequestRevision }
        return position
    }

    func admits(_ transaction: SimulatedTransaction) -> Bool {
        if let startMs, transaction.purchaseDateMs < startMs { return false }
        if let endMs, transaction.purchaseDateMs >= endMs { return false }
        if !productIds.isEmpty, !productIds.contains(transaction.productId) { return false }
        if !kinds.isEmpty, !kinds.contains(transaction.kind) { return false }
        if !subscriptionGroups.isEmpty, !subscriptionGroups.contains(transaction.subscriptionGroup ?? "") {
            return false
        }
        if let revoked, transaction.isRefunded != revoked { return false }
        if let ownershipType, ownershipType != "PURCHASED" { return false }
        return true
    }

    /// The `status` filter of Get All Subscription Statuses (repeatable, 1...5); empty: all.
    static func statuses(_ parameters: [String: [String]]) throws -> Set<Int> {
        var statuses: Set<Int> = []
        for text in parameters["status"] ?? [] {
            guard let status = Int(text), (1...5).contains(status) else { throw ServerAPIError.invalidStatus }
            statuses.insert(status)
        }
        return statuses
    }
}
