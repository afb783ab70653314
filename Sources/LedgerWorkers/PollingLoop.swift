import LedgerStore
import Logging

/// Runs `pass` every `interval` until the task is cancelled: the shape of every worker in
/// `serve`. A failed pass is logged and the next one comes at the next interval, so a database
/// or Apple outage only pauses a worker.
func pollUntilCancelled(every interval: Duration, logger: Logger, failure: String, _ pass: () async throws -> Void) async {
    while !Task.isCancelled {
        do {
            try await pass()
        } catch is CancellationError {
            return
        } catch {
            logger.warning("\(failure); trying again", metadata: ["error": "\(LedgerServiceError.mapping(error))"])
        }
        try? await Task.sleep(for: interval)
    }
}
