import CLibPQ
import Dispatch
import Synchronization

/// Lets a cancelled task interrupt the statement its pooled body is running (`PQcancel`).
///
/// One per `withConnection` call. The slot's queue marks it running (with the connection's
/// cancel handle) before the body and finished after; `cancel()` sends the request on a queue
/// of its own (it opens a socket to the server). The request is sent while holding the lock,
/// so the lease cannot finish, and the connection cannot start someone else's statement, until
/// it has gone out.
final class QueryCancellation: Sendable {
    private enum State {
        case pending
        case running(CancelHandle)
        case cancelled
        case finished
    }

    private let state = Mutex<State>(.pending)
    /// Blocking cancel requests run here, never on the cooperative pool or `DispatchQueue.global()`.
    private static let queue = DispatchQueue(label: "Postgres.QueryCancellation")

    /// Called on the slot's queue before the body; false when the task was already cancelled.
    func start(_ connection: Connection) -> Bool {
        let handle = connection.pgconn.flatMap(PQgetCancel).map(CancelHandle.init)
        return state.withLock { state in
            guard case .pending = state else { return false }
            if let handle { state = .running(handle) }
            return true
        }
    }

    /// Called on the slot's queue after the body.
    func finish() {
        state.withLock { $0 = .finished }
    }

    /// Called when the task is cancelled: stops a statement that is running, or the body from starting.
    func cancel() {
        let shouldSend = state.withLock { state -> Bool in
            switch state {
            case .pending:
                state = .cancelled
                return false
            case .running: return true
            case .cancelled, .finished: return false
            }
        }
        guard shouldSend else { return }
        Self.queue.async {
            self.state.withLock { state in
                if case .running(let handle) = state { handle.send() }
            }
        }
    }
}

/// Owns a `PGcancel*` (freed once).
///
/// `@unchecked Sendable` is safe because libpq documents `PQcancel` as safe to call from any
/// thread, and the handle is only used under ``QueryCancellation``'s lock.
private final class CancelHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { PQfreeCancel(pointer) }

    func send() {
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(pointer, &message, Int32(message.count))  // best effort: the statement may be done
    }
}
