import Foundation
import HTTPTypes
import Hummingbird
import LedgerProjections
import LedgerService
import LedgerWorkers
import Postgres

/// `GET /healthz`: the process answers and PostgreSQL answers a query.
struct HealthCheck: Sendable {
    let pool: ConnectionPool
    let worker: RetryWorker
    let runner: ProjectionRunner

    func response() async throws -> Response {
        struct Answer: Encodable {
            var status: String
            var database: String
            /// When down, the same error every call that needs the database answers (docs/http-api.md),
            /// so a client or probe reads one shape.
            var error: ErrorBody.Detail?
        }
        do {
            _ = try await pool.withConnection { try $0.query("SELECT 1") }
            return try JSONResponse.make(Answer(status: "ok", database: "ok"))
        } catch {
            let down = APIError.databaseUnavailable()
            var response = try JSONResponse.make(
                Answer(status: "unavailable", database: "unavailable", error: .init(code: down.code, message: down.message)), status: down.status)
            for field in down.headers { response.headers.append(field) }
            return response
        }
    }

    /// Pending receipts and how far the read models trail the log, for `/metrics`.
    func refreshGauges(_ metrics: LedgerMetrics) async {
        guard let pending = try? await worker.pendingCount(),
              let head = try? await runner.store.headPosition(),
              let applied = try? await runner.storedPosition()
        else { return }
        metrics.setGauges(pending: pending, projectionLag: max(0, head - applied))
    }
}
