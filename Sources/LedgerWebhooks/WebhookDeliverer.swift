import Foundation
import LedgerProjections
import LedgerStore
import Sealing
import Logging
import Postgres

/// Delivers the webhook projection to one endpoint, for `serve`: follows the projection (woken
/// by the projection runner's progress, which LISTEN drives, not by a timer), sends each user's
/// messages in log order while other users go on, retries a refused message with back-off for as
/// long as it takes, and records each pass with the endpoint's position in PostgreSQL, so a
/// server killed mid-pass sends that pass again (at least once) and loses nothing. Of several
/// servers on one database, the one holding the endpoint's lease delivers.
public final class WebhookDeliverer: Sendable {
    public let endpoint: WebhookEndpoint
    let store: WebhookDeliveryStore
    let sender: WebhookSender
    /// Opens the handles a stored body holds where it named a person (docs/erasure.md): each
    /// body is sent with the user id, or `erased:SUBJECT` once they are erased; nil sends the
    /// stored bytes.
    let people: People?
    let runner: ProjectionRunner
    let logger: Logger
    let settings: Settings

    public struct Settings: Sendable {
        /// How long a lease lasts unrenewed: a pass never runs longer (`sendingWindow` plus
        /// one send's time-out), so a lease is renewed before it can lapse under a live server.
        public var lease: Duration = .seconds(20)
        /// A pass starts no send after this; what it took in and did not send waits outstanding.
        public var sendingWindow: Duration = .seconds(5)
        /// Messages taken in per pass, and users sent to at once.
        public var pageSize = 500
        public var concurrency = 16
        /// Past this many users with outstanding messages (an endpoint that is down), new
        /// messages stay after the position instead of piling up as outstanding rows.
        public var outstandingUserLimit: Int64 = 2_000
        /// The longest idle wait: how often a server without the lease looks at it again.
        public var idleCheck: Duration = .seconds(2)

        public init() {}
    }

    public init(
        endpoint: WebhookEndpoint, pool: ConnectionPool, sender: WebhookSender, runner: ProjectionRunner, owner: String,
        settings: Settings = Settings(), people: People? = nil, logger: Logger
    ) {
        self.people = people
        self.endpoint = endpoint
        self.store = WebhookDeliveryStore(pool: pool, endpoint: endpoint, owner: owner, lease: settings.lease)
        self.sender = sender
        self.runner = runner
        self.settings = settings
        var logger = logger
        logger[metadataKey: "webhook_endpoint"] = "\(endpoint.name)"
        self.logger = logger
    }

    /// Delivers until the task is cancelled; database outages are waited out.
    public func run() async {
        var registered = false
        while !Task.isCancelled {
            do {
                if !registered {
                    try await store.register()
                    registered = true
                }
                guard try await store.holdLease() else {
                    try await Task.sleep(for: settings.idleCheck)
                    continue
                }
                let seen = runner.appliedPosition
                let pass = try await passOnce()
                if pass.didWork { continue }
                try await idle(caughtUp: pass.caughtUp, seen: seen)
            } catch is CancellationError {
                break
            } catch is WebhookDeliveryStore.LeaseLost {
                logger.notice("webhook lease taken by another server; this pass's results are left to it")
            } catch {
                if Task.isCancelled { break }
                logger.warning("webhook delivery pass failed; trying again", metadata: ["error": "\(LedgerServiceError.mapping(error))"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        try? await store.releaseLease()
    }

    /// Waits for work: new messages (the runner moving past `seen`, when this endpoint has
    /// taken in everything), or the next outstanding message coming due, whichever is first,
    /// and never longer than `idleCheck` (the lease is renewed by the next pass).
    private func idle(caughtUp: Bool, seen: Int64) async throws {
        let outlook = try await store.outstandingOutlook()
        var wait = settings.idleCheck
        if let due = outlook.dueIn { wait = min(wait, due) }
        guard wait > .zero else { return }
        if caughtUp {
            // Resumed by the runner as soon as it applies past `seen`; the time-out is the wait.
            _ = await runner.waitForProgress(to: seen + 1, timeout: wait)
            try Task.checkCancellation()
        } else {
            try await Task.sleep(for: wait)
        }
    }

    struct PassSummary {
        var didWork: Bool
        /// Every message the projection held when read was taken in.
        var caughtUp: Bool
    }

    /// One pass: due retries first, then new messages; recorded in one transaction.
    func passOnce() async throws -> PassSummary {
        let started = ContinuousClock.now
        var result = WebhookPassResult()
        // Retries: each user's earliest outstanding message that is due.
        let heads = try await store.dueHeads(limit: settings.pageSize)
        await sendConcurrently(heads.map { [($0.message, $0.attempts)] }, started: started, into: &result, queueRest: false)
        if !heads.isEmpty {
            try await store.record(result)
            return PassSummary(didWork: true, caughtUp: false)
        }
        // New messages, unless too many users already wait (the endpoint is down): then they
        // stay after the position, counted in the backlog, until it comes back.
        let outlook = try await store.outstandingOutlook()
        guard outlook.users < settings.outstandingUserLimit else { return PassSummary(didWork: false, caughtUp: false) }
        let intake = try await store.intake(limit: settings.pageSize)
        guard let last = intake.messages.last else { return PassSummary(didWork: false, caughtUp: true) }
        result.newPosition = last.position
        var chains: [String: [(WebhookMessage, Int32)]] = [:]
        var order: [String] = []
        for message in intake.messages {
            if intake.blocked.contains(message.userKey) {
                result.queued.append(message)
                continue
            }
            if chains[message.userKey] == nil { order.append(message.userKey) }
            chains[message.userKey, default: []].append((message, 0))
        }
        await sendConcurrently(order.map { chains[$0]! }, started: started, into: &result, queueRest: true)
        try await store.record(result)
        return PassSummary(didWork: true, caughtUp: intake.messages.count < settings.pageSize)
    }

    /// Sends each chain (one user's messages, in log order) one message after another, the
    /// chains at once up to `concurrency`. A chain stops at its first failure (the rest of it
    /// waits behind it) or when the sending window has closed.
    private func sendConcurrently(
        _ chains: [[(message: WebhookMessage, attempts: Int32)]], started: ContinuousClock.Instant, into result: inout WebhookPassResult,
        queueRest: Bool
    ) async {
        guard !chains.isEmpty else { return }
        let sender = sender
        let url = endpoint.url
        let window = settings.sendingWindow
        typealias ChainResult = (acknowledged: [WebhookMessage], failure: (WebhookMessage, Int32, String)?, unsent: [WebhookMessage])
        // The bodies as sent: each handle opened to the id it holds, or `erased:SUBJECT`
        // (docs/erasure.md), the pass's keys read in one query. What is recorded (queued,
        // failed) keeps the stored bytes.
        let sent: [String: Data]
        do {
            sent = try await openedBodies(chains.flatMap { $0.map(\.message) })
        } catch {
            let reason = "the people's keys could not be read: \(WebhookSender.describe(error))"
            let outcomes = chains.map { chain -> ChainResult in ([], (chain[0].message, chain[0].attempts + 1, reason), chain.dropFirst().map(\.message)) }
            record(outcomes, into: &result, queueRest: queueRest)
            return
        }
        let outcomes: [ChainResult] = await withTaskGroup(of: ChainResult.self) { group in
            var iterator = chains.makeIterator()
            func startNext() -> Bool {
                guard let chain = iterator.next() else { return false }
                group.addTask {
                    var done: ChainResult = ([], nil, [])
                    for (index, item) in chain.enumerated() {
                        if ContinuousClock.now - started > window || Task.isCancelled {
                            done.unsent = chain[index...].map(\.message)
                            break
                        }
                        var message = item.message
                        if let body = sent[message.id] { message.body = body }
                        switch await sender.send(message, to: url) {
                        case .acknowledged:
                            done.acknowledged.append(item.message)
                        case .failed(let reason):
                            done.failure = (item.message, item.attempts + 1, reason)
                            done.unsent = chain[(index + 1)...].map(\.message)
                            return done
                        }
                    }
                    return done
                }
                return true
            }
            for _ in 0..<settings.concurrency where startNext() {}
            var all: [ChainResult] = []
            for await outcome in group {
                all.append(outcome)
                _ = startNext()
            }
            return all
        }
        record(outcomes, into: &result, queueRest: queueRest)
    }

    /// The bodies of `messages` with their handles opened, by message id; empty without people.
    private func openedBodies(_ messages: [WebhookMessage]) async throws -> [String: Data] {
        guard let people else { return [:] }
        let opened = try await people.open(messages.map { Array($0.body) }, escaping: .json)
        return Dictionary(zip(messages.map(\.id), opened.map { Data($0) }), uniquingKeysWith: { first, _ in first })
    }

    private func record(
        _ outcomes: [(acknowledged: [WebhookMessage], failure: (WebhookMessage, Int32, String)?, unsent: [WebhookMessage])],
        into result: inout WebhookPassResult, queueRest: Bool
    ) {
        for outcome in outcomes {
            result.acknowledged += outcome.acknowledged
            if let (message, attempts, reason) = outcome.failure {
                let delay = WebhookBackoff.delay(afterAttempts: Int(attempts), unit: Double.random(in: 0..<1))
                result.failures.append((message, attempts, delay, reason))
                logger.info("webhook refused; will retry", metadata: [
                    "webhook_id": "\(message.id)", "attempts": "\(attempts)", "error": "\(reason)",
                    "retry_in_ms": "\(delay.components.seconds * 1_000 + delay.components.attoseconds / 1_000_000_000_000_000)",
                ])
            }
            if queueRest { result.queued += outcome.unsent }
        }
    }
}
