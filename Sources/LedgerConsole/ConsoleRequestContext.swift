import Hummingbird

/// What the console needs of the server's request context: the request id that every log line
/// of the request carries. LedgerHTTP's context conforms; the console never sees bearer tokens.
public protocol ConsoleRequestContext: RequestContext {
    var requestID: String { get }
}
