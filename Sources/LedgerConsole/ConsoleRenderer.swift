import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// Renders the console's pages: Mustache templates shipped as a resource, each page inside the
/// layout (navigation, who is signed in, sign-out form). `{{x}}` escapes HTML (ConsoleHTML, the
/// content type each template names first), so everything the ledger stores (ids, Apple's
/// bodies) is shown as text, never as markup; only the charts the console draws itself go in
/// unescaped.
struct ConsoleRenderer: Sendable {
    let library: MustacheLibrary
    let stylesheet: ByteBuffer

    init() async throws {
        guard let root = Bundle.module.resourceURL else {
            throw ConsoleError.internal("the console's templates are missing from the build")
        }
        ConsoleHTML.registerContentType()
        library = try await MustacheLibrary(directory: root.appendingPathComponent("Templates").path)
        stylesheet = ByteBuffer(bytes: try Data(contentsOf: root.appendingPathComponent("Static/console.css")))
    }

    /// A page for a signed-in user (`session` nil: the sign-in and error pages before one).
    func page(
        _ template: String, title: String, area: ConsoleArea?, session: ConsoleSession?, values: [String: Any],
        status: HTTPResponse.Status = .ok
    ) -> Response {
        var context = Self.withPresence(values)
        context["title"] = title
        if let session {
            context["signedIn"] = [
                "tokenName": session.tokenName, "role": session.role.rawValue, "csrf": session.csrfToken,
                "tabs": ConsoleArea.allCases.filter { session.role.may($0) }.map { tab in
                    ["href": "/console/\(tab.rawValue)", "title": tab.title, "current": tab == area] as [String: Any]
                },
            ] as [String: Any]
        }
        let html = library.render(context, withTemplate: template) ?? "template \(template) is missing"
        return Self.html(html, status: status)
    }

    /// Adds `hasItems` beside every list `items` (nested too): Mustache cannot test a list for
    /// emptiness without iterating it, and a section around a table must show once.
    static func withPresence(_ values: [String: Any]) -> [String: Any] {
        var out = values
        for (key, value) in values {
            let presence = "has" + key.prefix(1).uppercased() + key.dropFirst()
            if let list = value as? [Any] {
                out[presence] = !list.isEmpty
                if let dictionaries = list as? [[String: Any]] { out[key] = dictionaries.map(withPresence) }
            } else if let dictionary = value as? [String: Any] {
                out[key] = withPresence(dictionary)
            }
        }
        return out
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// No scripts at all, styles from our own sheet, nothing framed, nothing cached: the pages
    /// show revenue and customers' purchases.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .cacheControl: "no-store",
    ]

    /// 303 See Other: after a form, the browser GETs the next page.
    static func redirect(_ location: String, cookies: [Cookie] = []) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        var response = Response(status: .seeOther, headers: headers)
        for cookie in cookies { response.setCookie(cookie) }
        return response
    }

    /// A download: the same bytes the CLI and the API give, with a file name.
    static func download(_ bytes: [UInt8], contentType: String, fileName: String) -> Response {
        var headers = securityHeaders
        headers[.contentType] = contentType
        headers[.contentDisposition] = "attachment; filename=\"\(fileName)\""
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// A console failure shown to the user as a page, with its status.
struct ConsoleError: Error, Sendable, Hashable {
    var status: HTTPResponse.Status
    var message: String
    /// The page's heading.
    var title = "Cannot show this page"

    static func badRequest(_ message: String) -> ConsoleError { ConsoleError(status: .badRequest, message: message) }
    static func notFound(_ message: String) -> ConsoleError { ConsoleError(status: .notFound, message: message) }
    static func `internal`(_ message: String) -> ConsoleError { ConsoleError(status: .internalServerError, message: message) }

    /// 413: a body over `limit` bytes, refused as soon as it passed the limit.
    static func tooLarge(limit: Int) -> ConsoleError {
        ConsoleError(status: .contentTooLarge, message: "The upload is over \(limit >> 20) MB.", title: "Upload too large")
    }

    /// 403: a form without the session's CSRF token, or with another.
    static let csrfRefused = ConsoleError(
        status: .forbidden,
        message: "This form was not sent from the console's own page (its CSRF token is missing or wrong). Nothing was changed.",
        title: "Form refused")
}
