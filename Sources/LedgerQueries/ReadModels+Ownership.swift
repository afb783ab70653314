import Foundation
import Ledger
import LedgerStore
import Postgres

/// `GET /v1/ownership/{original_transaction_id}`.
public struct OwnershipView: Sendable, Hashable {
    public struct Change: Sendable, Hashable {
        public var position: Int64
        /// ISO 8601, UTC.
        public var recordedAt: String
        /// The holder from this change on; nil when ownership ended (refund, revocation).
        public var userId: String?
        public var reason: String
    }

    public var originalTransactionId: String
    /// The app the purchase belongs to.
    public var bundleId: String
    public var productId: String
    public var ownerUserId: String?
    public var appleAccount: String?
    public var history: [Change]
}

/// `GET /v1/apple-accounts/{apple_account}`.
public struct AppleAccountView: Sendable, Hashable {
    public var appleAccount: String
    public var users: [String]
    public var originalTransactionIds: [String]
}

extension ReadModels {
    /// Nil when the ledger holds no purchase with that `original_transaction_id`.
    public func ownership(_ originalTransactionId: String) async throws -> OwnershipView? {
        try await ownerships([originalTransactionId]).first
    }

    /// The ownership of each of `originalTransactionIds` the ledger holds, in their order, read
    /// once the projections hold the log as it stood at the call (one wait, one connection, and
    /// three queries however many: a user's look-up asks for twenty).
    public func ownerships(_ originalTransactionIds: [String]) async throws -> [OwnershipView] {
        try await mappingDatabaseErrors {
            return try await withConsistentConnection { [legacy] connection in
                try Self.ownerships(originalTransactionIds, legacyApp: try legacy.name(on: connection), on: connection)
            }
        }
    }

    static func ownerships(_ originalTransactionIds: [String], legacyApp: String, on connection: Connection) throws -> [OwnershipView] {
        guard !originalTransactionIds.isEmpty else { return [] }
        let ids = PostgresArray(originalTransactionIds.map(Optional.some))
        var owned: [String: (productId: String, owner: String?, app: String)] = [:]
        for row in try connection.query("""
            SELECT original_transaction_id, product_id, owner_user_id, coalesce(bundle_id, \(legacyApp)) FROM projection_ownership
            WHERE original_transaction_id = ANY(\(ids))
            """) {
            owned[try row.decode(0)] = (try row.decode(1), try row.decode(2), try row.decode(3))
        }
        var histories: [String: [OwnershipView.Change]] = [:]
        for change in try connection.query("""
            SELECT original_transaction_id, position, recorded_at_ms, user_id, reason FROM projection_ownership_history
            WHERE original_transaction_id = ANY(\(ids)) ORDER BY original_transaction_id, position
            """) {
            histories[try change.decode(0), default: []].append(OwnershipView.Change(
                position: try change.decode(1), recordedAt: RevenueDay.iso8601(try change.decode(2)),
                userId: try change.decode(3), reason: try change.decode(4)))
        }
        var accounts: [String: String] = [:]
        for row in try connection.query("""
            SELECT g.original_transaction_id, \(fragment: Self.accountName) FROM projection_apple_account_members g
            WHERE g.original_transaction_id = ANY(\(ids))
            """) {
            accounts[try row.decode(0)] = try row.decode(1)
        }
        return originalTransactionIds.compactMap { id in
            owned[id].map { OwnershipView(
                originalTransactionId: id, bundleId: $0.app, productId: $0.productId, ownerUserId: $0.owner, appleAccount: accounts[id],
                history: histories[id] ?? []) }
        }
    }

    /// The Apple account named `name`: its `appTransactionId`, or `otx:` and any of its
    /// original transaction ids (a name given before two groups were united still finds the
    /// united account, under its current name). Nil when unknown.
    public func appleAccount(_ name: String) async throws -> AppleAccountView? {
        try await mappingDatabaseErrors {
            return try await withConsistentConnection { connection in
                let lookup: SQL = name.hasPrefix("otx:")
                    ? "SELECT root FROM projection_apple_account_members WHERE original_transaction_id = \(String(name.dropFirst(4)))"
                    : "SELECT min(root) FROM projection_apple_account_members WHERE app_transaction_id = \(name) HAVING count(*) > 0"
                guard let found = try connection.query(lookup).first else { return nil }
                let root: String = try found.decode(0)
                let canonical: String = try connection.query("""
                    SELECT \(fragment: Self.accountName) FROM projection_apple_account_members g WHERE original_transaction_id = \(root)
                    """)[0].decode(0)
                let originals: [String] = try connection.query("""
                    SELECT original_transaction_id FROM projection_apple_account_members WHERE root = \(root) ORDER BY original_transaction_id
                    """).map { try $0.decode(0) }
                let users: [String] = try connection.query("""
                    SELECT DISTINCT h.user_id FROM projection_ownership_history h
                    JOIN projection_apple_account_members m ON m.original_transaction_id = h.original_transaction_id
                    WHERE m.root = \(root) AND h.user_id IS NOT NULL ORDER BY h.user_id
                    """).map { try $0.decode(0) }
                return AppleAccountView(appleAccount: canonical, users: users, originalTransactionIds: originals)
            }
        }
    }

    /// The Apple accounts that paid for anything `userId` ever held, by name.
    static func appleAccounts(of userId: String, on connection: Connection) throws -> [String] {
        try connection.query("""
            SELECT DISTINCT \(fragment: accountName) FROM projection_ownership_history h
            JOIN projection_apple_account_members g ON g.original_transaction_id = h.original_transaction_id
            WHERE h.user_id = \(userId) ORDER BY 1
            """).map { try $0.decode(0) }
    }

    /// The name of the account of member row `g` (docs/http-api.md): the group's appTransactionId
    /// when Apple gave one, else `otx:` and the group's root.
    static let accountName: SQL = """
        coalesce((SELECT min(a.app_transaction_id) FROM projection_apple_account_members a WHERE a.root = g.root), 'otx:' || g.root)
        """
}
