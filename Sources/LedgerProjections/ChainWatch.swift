import EventStore
import Logging
import Postgres

/// Verifies the hash chain incrementally from a stored checkpoint, so a dispute timeline can say
/// whether its events lie in the verified part without walking the whole log per request. The
/// full walk stays `purchase-ledger verify`'s, which trusts no checkpoint.
public struct ChainWatch: Sendable {
    /// What the checkpoint says.
    public struct State: Sendable, Hashable {
        /// Every event up to here verified from the first one.
        public var position: Int64
        public var hash: [UInt8]
        /// Why the event after `position` does not verify, when it does not.
        public var broken: String?
    }

    let pool: ConnectionPool
    let logger: Logger

    public init(pool: ConnectionPool, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    public func state() async throws -> State {
        try await pool.withConnection { try Self.state(on: $0) }
    }

    public static func state(on connection: Connection) throws -> State {
        guard let row = try connection.query(.prepared("SELECT position, hash, broken FROM chain_checkpoint")).first else {
            return State(position: 0, hash: ChainVerifier.genesisHash, broken: nil)
        }
        return State(position: try row.decode(0), hash: try row.decode(1), broken: try row.decode(2))
    }

    /// Verifies the next page after the checkpoint and moves it; returns how many events were
    /// verified (0 when caught up or broken).
    @discardableResult
    public func advance(pageSize: Int = 5_000) async throws -> Int64 {
        let current = try await state()
        guard current.broken == nil else { return 0 }
        let outcome = try await ChainVerifier(pool: pool, pageSize: pageSize).extend(after: current.position, previous: current.hash)
        switch outcome {
        case .verified(let reached, let head):
            guard reached > current.position else { return 0 }
            try await save(position: reached, hash: head, broken: nil, over: current.position)
            return reached - current.position
        case .broken(let position, let reason):
            logger.critical("the hash chain does not verify: run purchase-ledger verify", metadata: ["position": "\(position)", "reason": "\(reason)"])
            try await save(position: current.position, hash: current.hash, broken: "position \(position): \(reason)", over: current.position)
            return 0
        }
    }

    /// Moves the checkpoint only from where it was read, so two watchers never move it back.
    private func save(position: Int64, hash: [UInt8], broken: String?, over previous: Int64) async throws {
        try await pool.withConnection { connection in
            _ = try connection.query(.prepared("""
                INSERT INTO chain_checkpoint (position, hash, broken) VALUES (\(position), \(hash), \(broken))
                ON CONFLICT (singleton) DO UPDATE SET position = excluded.position, hash = excluded.hash, broken = excluded.broken,
                    updated_at = now()
                WHERE chain_checkpoint.position = \(previous) AND chain_checkpoint.broken IS NULL
                """))
        }
    }
}
