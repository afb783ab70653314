import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging
import Postgres
import Synchronization

/// Answers Apple's refund requests (CONSUMPTION_REQUEST) well within its 12 hours: tells Apple
/// how much of the purchase was used and that it was delivered, where the user consented, and
/// records what it said (`ConsumptionInformationSent`, the body as sent kept as a document) or
/// why it said nothing (`ConsumptionInformationWithheld`). Each request is answered once: the
/// record claims `consumption-<notification id>` expecting no stream. Apple being down or
/// rate limiting only delays the answer: the request stays in the set and is tried again later.
public final class ConsumptionAnswerer: Sendable {
    let service: PurchaseService
    /// Apple takes an answer from the app the request came from.
    let clients: ServerAPIClients
    let pollInterval: Duration
    let logger: Logger
    /// When each failed request may be tried again, and how often it failed. A wait in this
    /// process, measured as a duration: it is no date the ledger records.
    private let backoff = Mutex<[String: (notBefore: ContinuousClock.Instant, failures: Int)]>([:])

    public init(service: PurchaseService, clients: ServerAPIClients, pollInterval: Duration = .seconds(5), logger: Logger) {
        self.service = service
        self.clients = clients
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// Answers until the task is cancelled.
    public func run() async {
        await pollUntilCancelled(every: pollInterval, logger: logger, failure: "consumption answers pass failed") { _ = try await runOnce() }
    }

    /// Answers every unanswered request that is due; returns how many were settled.
    @discardableResult
    public func runOnce() async throws -> Int {
        let now = ContinuousClock.now
        var settled = 0
        for request in try await service.reads.unansweredConsumptionRequests() {
            if Task.isCancelled { break }
            if let wait = backoff.withLock({ $0[request.notificationId] }), wait.notBefore > now { continue }
            if try await answer(request) { settled += 1 }
        }
        return settled
    }

    /// Settles one request; false when Apple could not take the answer now.
    private func answer(_ request: AppleNotificationReceived) async throws -> Bool {
        let id = request.notificationId
        let transactionId = request.transactionId ?? ""
        let record = transactionId.isEmpty ? nil : try await service.reads.transactionRecords([transactionId]).first
        var wallet: Wallet?
        var consent: ConsumptionConsentRecorded?
        let legacy = try await service.reads.legacyApp()
        if let record {
            // The consent and the coins of the purchase's own app.
            let app = record.bundleId(legacyApp: legacy) ?? service.configuration.bundleId
            let streams = try await service.reads.streams(of: app)
            consent = try await service.reads.consent(userId: record.userId, in: streams)
            if case .delivered(let delivery) = record, let unit = delivery.grants.keys.sorted().first {
                wallet = try await service.reads.wallet(userId: record.userId, unit: unit, in: streams).wallet
            }
        }
        let configuration = service.configuration
        let verdict = ConsumptionAnswer.decide(
            record: record, consent: consent, wallet: wallet, nowMs: service.clock(),
            refundPreference: configuration.refundPreference, sampleContentProvided: configuration.sampleContentProvided)
        switch verdict {
        case .withhold(let reason, let user):
            try await settle(id, with: .consumptionInformationWithheld(ConsumptionInformationWithheld(
                notificationId: id, transactionId: request.transactionId, userId: user, reason: reason, atMs: service.clock())))
            logger.notice("a refund request was not answered", metadata: ["notification_id": "\(id)", "reason": "\(reason)"])
            return true
        case .send(let body, let user):
            let environment: AppStoreEnvironment = request.environment == "Sandbox" ? .sandbox : .production
            let sentBody = Array((try? JSONEncoder().encode(body)) ?? Data())
            guard let client = clients.client(for: request.bundleId ?? record?.bundleId(legacyApp: legacy), legacyApp: legacy) else {
                // An app no longer served: its key may not answer for it.
                try await settle(id, with: .consumptionInformationWithheld(ConsumptionInformationWithheld(
                    notificationId: id, transactionId: transactionId, userId: user, reason: "app_not_served", atMs: service.clock())))
                return true
            }
            do {
                let answer = try await client.sendConsumption(body, transactionId: transactionId, environment: environment)
                // What the ledger told Apple about a person's use of what they bought: theirs.
                let document = DocumentStore.insert(sentBody, kind: "consumption_request", sealedFor: try await service.people.documentSeal(forUser: user))
                try await settle(id, with: .consumptionInformationSent(ConsumptionInformationSent(
                    notificationId: id, transactionId: transactionId, userId: user, consumptionPercentage: body.consumptionPercentage,
                    deliveryStatus: body.deliveryStatus, refundPreference: body.refundPreference, sampleContentProvided: body.sampleContentProvided,
                    documentSha256: document.name, httpStatus: answer.attempts.last?.httpStatus ?? 202, sentAtMs: service.clock())),
                    alongside: [document.statement])
                backoff.withLock { $0[id] = nil }
                return true
            } catch let error as ServerAPIError where error.kind == .refused {
                // Apple will not take this answer as it stands; asking again changes nothing.
                try await settle(id, with: .consumptionInformationWithheld(ConsumptionInformationWithheld(
                    notificationId: id, transactionId: transactionId, userId: user, reason: "refused_by_apple",
                    appleErrorCode: error.errorCode, atMs: service.clock())))
                return true
            } catch let error as ServerAPIError {
                let failures = (backoff.withLock { $0[id]?.failures } ?? 0) + 1
                // Hours at most: Apple waits 12 for the answer.
                let delayMs = min(Int64(600_000), Int64(1_000) << min(failures, 10)) + (error.retryAfterSeconds.map { Int64($0) * 1000 } ?? 0)
                backoff.withLock { $0[id] = (ContinuousClock.now + .milliseconds(delayMs), failures) }
                logger.warning("Apple did not take a consumption answer; trying again later", metadata: [
                    "notification_id": "\(id)", "error": "\(error)", "retry_in_ms": "\(delayMs)",
                ])
                return false
            }
        }
    }

    /// Records the request's settlement once; another worker that settled it first wins.
    private func settle(_ notificationId: String, with event: LedgerEvent, alongside: [SQL] = []) async throws {
        do {
            try await service.log.append(
                [LedgerAppend(stream: Streams.consumptionAnswer(notificationId: notificationId), expectation: .noStream, events: [event])],
                metadata: RequestMetadata(actor: "consumption-worker"), alongside: alongside)
        } catch EventStoreError.Code.wrongExpectedVersion {
            logger.info("a refund request was settled by another worker", metadata: ["notification_id": "\(notificationId)"])
        }
    }
}
