import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import Primitives

/// The one way the ledger asks Apple's JWT-authenticated APIs (the App Store Server API and the
/// App Store Connect API): a cached ES256 token on every attempt, 429's `Retry-After` honoured
/// up to the policy's longest wait, full-jitter backoff on 5xx, time-outs and refused
/// connections, alarm statuses never retried (one critical log line naming the settings to
/// check, the cached token dropped), and every attempt kept verbatim. A client adds only its
/// endpoints, its token's claims and how its API words an error.
struct AppleAPICore: Sendable {
    /// What the log lines call the API: "the App Store Server API".
    let name: String
    let access: AppleAPIAccess
    /// The machine's time: the tokens' `iat` and `exp`, which Apple checks against its own
    /// clock, and when each attempt started.
    let clock: WallClock
    let token: AppleAPIToken
    let httpClient: HTTPClient
    let logger: Logger
    /// The largest body kept; Apple's answers are far smaller.
    let bodyLimit: Int
    /// Statuses that mean our configuration is wrong.
    let alarms: Set<Int>
    /// The critical log line for an alarm status: which settings to check.
    let alarmMessage: @Sendable (_ status: Int) -> String
    /// Told of every alarm (the Server API's health check counts them).
    let onAlarm: @Sendable () -> Void

    /// Asks until Apple answers 2xx or an answer not worth asking again about. Returns every
    /// attempt, the last one the 2xx.
    func exchange(_ method: HTTPMethod, url: String, body: Data? = nil) async throws(AppleAPIFailure) -> [ServerAPIAttempt] {
        let exchange = AppleHTTPExchange(httpClient: httpClient, clock: clock, timeout: access.timeout, bodyLimit: bodyLimit)
        var attempts: [ServerAPIAttempt] = []
        var attempt = 0
        while true {
            attempt += 1
            let bearer: String
            do { bearer = try await token.current(nowMs: clock()) } catch {
                throw AppleAPIFailure(.unsignable, note: "the token could not be signed", attempts: attempts)
            }
            let (answer, retryAfter) = await exchange.send(method, url: url, body: body, bearer: bearer)
            attempts.append(answer)
            let lastAttempt = attempt >= access.maximumAttempts
            switch answer.httpStatus {
            case let code? where (200..<300).contains(code):
                return attempts
            case let code? where alarms.contains(code):
                token.discard()
                // The alarm: a wrong key, key id, issuer or clock does not heal by asking again.
                logger.critical("\(alarmMessage(code))", metadata: ["url": "\(url)", "key_id": "\(access.keyId)"])
                onAlarm()
                throw AppleAPIFailure(.alarm, httpStatus: code, attempts: attempts)
            case 429?:
                let wait = retryAfter ?? 1
                guard !lastAttempt, Duration.seconds(wait) <= access.longestRetryAfter else {
                    throw AppleAPIFailure(.rateLimited, httpStatus: 429, retryAfterSeconds: wait, attempts: attempts)
                }
                logger.notice("rate limited by \(name); waiting as asked", metadata: ["retry_after_s": "\(wait)"])
                try? await Task.sleep(for: .seconds(wait))
            case let code? where code >= 500:
                guard !lastAttempt else { throw AppleAPIFailure(.unavailable, httpStatus: code, attempts: attempts) }
                try? await Task.sleep(for: access.backoff(afterAttempt: attempt))
            case let code?:
                throw AppleAPIFailure(.refused, httpStatus: code, attempts: attempts)
            case nil:
                guard !lastAttempt else { throw AppleAPIFailure(.unavailable, note: answer.failure, attempts: attempts) }
                try? await Task.sleep(for: access.backoff(afterAttempt: attempt))
            }
            if Task.isCancelled { throw AppleAPIFailure(.unavailable, note: "cancelled", attempts: attempts) }
        }
    }
}
