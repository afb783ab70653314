import AppStore
import EventStore
import Foundation
import Ledger
import LedgerStore

extension PurchaseService {
    /// `POST /v1/users/{user_id}/spend`: records that the app used `amount` of the user's
    /// `unit`, attributed to their purchases first in, first out.
    ///
    /// Exactly once per `spendId`, by the database: the event carries it as its idempotency key,
    /// so the same spend again answers the first result and other content is
    /// `idempotency_conflict`. Never below zero: the spend appends to the user's wallet stream
    /// expecting the version its balance was read at, so of two spends racing for the last
    /// coins one wins and the other reads again.
    ///
    /// In the app `bundleId` names (`app(named:)`): coins bought in one app are spent there only,
    /// from that app's wallet stream, under that app's spend keys (`AppStreams`).
    public func spend(
        userId: String, unit: String, amount: Int64, spendId: String, reason: String?, bundleId: String? = nil, metadata: RequestMetadata
    ) async throws -> BalanceSpent {
        let app = try app(named: bundleId)
        return try await mappingDatabaseErrors {
            let streams = try await reads.streams(of: app)
            let key = streams.spendKey(userId: userId, spendId: spendId)
            return try await once(key: key, naming: "spend_id \(spendId)", earlier: { event in
                guard case .balanceSpent(let first) = event, first.unit == unit, first.amount == amount, first.reason == reason else { return nil }
                return first
            }) {
                let stream = streams.wallet(userId: userId, unit: unit)
                return try await walletTurns.run(stream) {
                    // Each lost race means another server's spend of this wallet committed: bounded
                    // by how many servers spend from one wallet at once.
                    for attempt in 1...256 {
                        let (wallet, version) = try await reads.wallet(userId: userId, unit: unit, in: streams)
                        guard let shares = wallet.attributions(for: amount) else {
                            throw LedgerServiceError(
                                .insufficientBalance, "user \(userId) has \(wallet.balance) \(unit), fewer than the \(amount) to spend")
                        }
                        let spent = BalanceSpent(
                            userId: userId, unit: unit, amount: amount, spendId: spendId, reason: reason, balanceAfter: wallet.balance - amount,
                            attributions: shares, spentAtMs: clock(), bundleId: app)
                        do {
                            try await log.append(
                                [LedgerAppend(stream: stream, expectation: version == 0 ? .noStream : .exactly(version), events: [.balanceSpent(spent)])],
                                metadata: metadata, idempotencyKey: key)
                            return spent
                        } catch EventStoreError.Code.wrongExpectedVersion {
                            // A little jitter, growing, so the losers of one race do not meet again at once.
                            try await Task.sleep(for: .microseconds(Int.random(in: 0...(200 * min(attempt, 20)))))
                        }
                    }
                    throw LedgerServiceError(.busy, "the balance of user \(userId) is being spent by many requests at once; ask again")
                }
            }
        }
    }

    /// `POST /v1/users/{user_id}/consent`: whether the user agreed that consumption data may
    /// be sent to Apple when it asks about a refund request, in the app `bundleId` names. The
    /// latest answer holds.
    public func recordConsent(
        userId: String, consumptionData: Bool, bundleId: String? = nil, metadata: RequestMetadata
    ) async throws -> ConsumptionConsentRecorded {
        let app = try app(named: bundleId)
        return try await mappingDatabaseErrors {
            let consent = ConsumptionConsentRecorded(userId: userId, consumptionData: consumptionData, recordedAtMs: clock(), bundleId: app)
            try await log.append(
                [LedgerAppend(stream: try await reads.streams(of: app).consent(userId: userId), expectation: .any,
                              events: [.consumptionConsentRecorded(consent)])],
                metadata: metadata)
            return consent
        }
    }
}
