import Logging

/// The id of the request a task works for, so every log line written on its behalf carries it
/// (docs/http-api.md), whichever logger writes it: the HTTP handler's, the service's, or the Apple
/// client's. `RequestMiddleware` binds it around the handler; the metadata provider, installed
/// where logging is bootstrapped, reads it.
public enum RequestLogContext {
    @TaskLocal public static var requestID: String?

    public static let metadataProvider = Logger.MetadataProvider {
        requestID.map { ["request_id": .string($0)] } ?? [:]
    }
}
