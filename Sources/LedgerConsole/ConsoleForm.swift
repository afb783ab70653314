import Hummingbird
import NIOCore

/// The console's `application/x-www-form-urlencoded` forms, decoded by Hummingbird's
/// `URLEncodedFormDecoder` from a body of at most 16 KB.
enum ConsoleForm {
    static let maximumBytes = 16 * 1024

    /// The request's form as `Form`; a body over 16 KB is 413, one that does not decode 400.
    static func decode<Form: Decodable>(_ type: Form.Type, from request: Request) async throws -> Form {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumBytes)
        } catch {
            throw ConsoleError(status: .contentTooLarge, message: "The form is over \(maximumBytes / 1024) KB.")
        }
        do {
            return try URLEncodedFormDecoder().decode(Form.self, from: String(buffer: buffer))
        } catch {
            throw ConsoleError.badRequest("The form could not be read.")
        }
    }
}

/// A form that changes something: it carries the session's CSRF token.
protocol ConsoleFormWithCSRF: Decodable, Sendable {
    var csrf: String? { get }
}

/// The sign-in form: the token typed, and the sign-in cookie's value repeated.
struct SignInForm: Decodable, Sendable {
    var token: String?
    var csrf: String?
}

/// A form with nothing but its CSRF token (sign-out).
struct CSRFOnlyForm: ConsoleFormWithCSRF {
    var csrf: String?
}
