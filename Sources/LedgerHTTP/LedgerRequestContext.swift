import HTTPTypes
import LedgerConsole
import Hummingbird
import Logging

/// The context of one API request: its request id (echoed in `X-Request-ID` and in every log
/// line of the request) and who it was authenticated as.
public struct LedgerRequestContext: RequestContext, ConsoleRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Taken from the request's `X-Request-ID` when it sends a usable one, else made here.
    public var requestID: String = ""
    /// The scope of the bearer token the request carried, once authenticated.
    public var scope: APIScope?
    /// The token's name for the events' metadata (`api:<first 6 chars of its sha256>`).
    public var actor: String = "anonymous"

    public init(source: Source) {
        coreContext = .init(source: source)
    }

    /// Bodies over 1 MB are refused with 413 (CONTRACT.md).
    public var maxUploadSize: Int { APILimits.maximumBodyBytes }
}

public enum APILimits {
    public static let maximumBodyBytes = 1 << 20
}
