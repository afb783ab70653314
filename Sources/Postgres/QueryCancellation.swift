import CLibPQ
import Dispatch
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Lets a cancelled task interrupt the statement its pooled body is running (`PQcancel`), within
/// a deadline.
///
/// One per `withConnection` call. The slot's queue marks it running (with the connection's
/// cancel handle and socket) before the body and finished after. `cancel()` sends the request
/// from a thread of its own: `PQcancel` (libpq 15) opens a connection to the server with no
/// time-out and then waits for the server to close it, so a host that drops packets, or accepts
/// and never answers, would hold it for the kernel's connect time-out or for ever. A watchdog
/// waits `deadline` for it:
/// - sent in time: the statement ends with `SQLState.queryCanceled`, as it always did;
/// - not sent in time: the request is abandoned (its thread left to the kernel; at most
///   `senderLimit` of them at once, beyond which none is started) and the connection's socket
///   is shut down, so the body's wait for the statement ends with a connection error and the
///   connection is closed.
/// A connection whose cancel was still on its way when the body finished is closed too, never
/// reused: a request landing later would cancel someone else's statement.
final class QueryCancellation: Sendable {
    private enum State {
        case pending
        case running(CancelHandle, socket: Int32)
        /// A request is on its way; the body is still running.
        case cancelling(socket: Int32)
        /// The server has the request.
        case sent
        /// The request could not be sent within the deadline; the socket was shut down.
        case abandoned
        /// Cancelled before the body started.
        case cancelled
        case finished
    }

    private let state = Mutex<State>(.pending)
    private let deadline: Duration
    private let logger: Logger?

    /// How long a cancel request may take to reach the server and be answered.
    static let defaultDeadline: Duration = .seconds(3)
    /// Cancel requests sent and not yet answered, across every pool of the process.
    private static let senders = Atomic<Int>(0)
    private static let senderLimit = 16
    /// The watchdogs wait here, never on the cooperative pool or `DispatchQueue.global()`.
    private static let watchdogs = DispatchQueue(label: "Postgres.QueryCancellation.watchdog", attributes: .concurrent)

    init(deadline: Duration = QueryCancellation.defaultDeadline, logger: Logger? = nil) {
        self.deadline = deadline
        self.logger = logger
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Called on the slot's queue before the body; false when the task was already cancelled.
    func start(_ connection: Connection) -> Bool {
        let handle = connection.pgconn.flatMap(PQgetCancel).map(CancelHandle.init)
        let socket = connection.pgconn.map(PQsocket) ?? -1
        return state.withLock { state in
            guard case .pending = state else { return false }
            if let handle, socket >= 0 { state = .running(handle, socket: socket) }
            return true
        }
    }

    /// Called on the slot's queue after the body. True when the connection must be closed: a
    /// cancel request was still on its way, or was abandoned and the socket shut down.
    func finish() -> Bool {
        state.withLock { state in
            defer { state = .finished }
            switch state {
            case .cancelling, .abandoned: return true
            default: return false
            }
        }
    }

    /// Called when the task is cancelled: stops a statement that is running, or the body from starting.
    func cancel() {
        let started = state.withLock { state -> (CancelHandle, Int32)? in
            switch state {
            case .pending:
                state = .cancelled
                return nil
            case .running(let handle, let socket):
                state = .cancelling(socket: socket)
                return (handle, socket)
            default:
                return nil
            }
        }
        guard let (handle, _) = started else { return }
        let answered = DispatchSemaphore(value: 0)
        if Self.senders.add(1, ordering: .relaxed).newValue <= Self.senderLimit {
            let thread = Thread {
                handle.send()
                Self.senders.subtract(1, ordering: .relaxed)
                answered.signal()
            }
            thread.name = "Postgres.cancel"
            thread.start()
        } else {
            Self.senders.subtract(1, ordering: .relaxed)
            logger?.warning("too many cancel requests unanswered: closing the connection instead of asking the server")
        }
        let deadline = deadline
        Self.watchdogs.async {
            let sent = answered.wait(timeout: .now() + .milliseconds(Self.milliseconds(deadline))) == .success
            self.state.withLock { state in
                // Only while the body still runs: after `finish()` the connection may be closed
                // and its descriptor number reused by another socket.
                guard case .cancelling(let socket) = state else { return }
                if sent {
                    state = .sent
                } else {
                    shutdown(socket, Int32(SHUT_RDWR))
                    state = .abandoned
                }
            }
            if !sent {
                self.logger?.warning("a cancel request got no answer within its deadline: the connection is closed instead", metadata: [
                    "deadline_ms": "\(Self.milliseconds(deadline))",
                ])
            }
        }
    }
}

/// Owns a `PGcancel*` (freed once, when the last user lets go: the pool's lease or a sender
/// thread still blocked in `PQcancel`).
///
/// `@unchecked Sendable` is safe because libpq documents `PQcancel` as safe to call from any
/// thread, and `PGcancel` is not changed by it.
private final class CancelHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { PQfreeCancel(pointer) }

    func send() {
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(pointer, &message, Int32(message.count))  // best effort: the statement may be done
    }
}
