import Foundation
import Hummingbird
import MultipartKit
import NIOCore
import Primitives

/// A `multipart/form-data` upload (the reconciliation form), read as it streams in with
/// MultipartKit's parser, after the session was checked:
/// - a declared `Content-Length` over the limit is refused before a byte is read, and the bytes
///   are counted as they arrive: the read stops with 413 as soon as they pass the limit;
/// - the form's first field must be its CSRF token (the page's form puts it first, and browsers
///   send fields in document order): it is checked as soon as it has arrived, and a form
///   without it or with a wrong one is refused (403) before any file byte is kept.
struct ConsoleUpload {
    /// The form's parts, as MultipartKit gives them (`parts.firstPart(named:)`).
    let parts: [MultipartPart]

    /// A file field's bytes and the file name the browser gave.
    func file(named name: String) -> (fileName: String?, bytes: [UInt8])? {
        guard let part = parts.firstPart(named: name) else { return nil }
        return (Self.fileName(of: part), Array(part.body.readableBytesView))
    }

    /// Reads the request's body as a multipart form of at most `limit` bytes whose first field
    /// `csrf` equals `csrf`. Throws `ConsoleError`: 400 not a multipart form, 403 CSRF token
    /// missing, late or wrong, 413 over the limit.
    static func read(_ request: Request, csrf expected: String, limit: Int) async throws -> ConsoleUpload {
        guard let contentType = request.headers[.contentType], let mediaType = MediaType(from: contentType),
              mediaType.isType(.multipartForm), let parameter = mediaType.parameter,
              parameter.name.lowercased() == "boundary", !parameter.value.isEmpty
        else { throw ConsoleError.badRequest("Send the report with the page's upload form (multipart/form-data).") }
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            throw ConsoleError.tooLarge(limit: limit)
        }

        let parser = MultipartParser(boundary: parameter.value)
        var parts: [MultipartPart] = []
        var headers = HTTPHeaders()
        var body = ByteBuffer()
        // nil until the first field is complete; then whether it was the right CSRF token.
        var csrfAccepted: Bool?
        parser.onHeader = { name, value in headers.replaceOrAdd(name: name, value: value) }
        parser.onBody = { chunk in
            // Before the CSRF token is accepted, only the CSRF field itself is kept.
            if csrfAccepted == true || (csrfAccepted == nil && MultipartPart(headers: headers, body: ByteBuffer()).name == "csrf") {
                body.writeBuffer(&chunk)
            } else {
                csrfAccepted = false
            }
        }
        parser.onPartComplete = {
            let part = MultipartPart(headers: headers, body: body)
            headers = HTTPHeaders()
            body = ByteBuffer()
            if csrfAccepted == nil {
                let sent = part.name == "csrf" ? String(decoding: part.body.readableBytesView, as: UTF8.self) : ""
                csrfAccepted = !sent.isEmpty && ConstantTime.equal(sent.utf8, expected.utf8)
            }
            if csrfAccepted == true { parts.append(part) }
        }

        var received = 0
        for try await chunk in request.body {
            received += chunk.readableBytes
            guard received <= limit else { throw ConsoleError.tooLarge(limit: limit) }
            do {
                try parser.execute(chunk)
            } catch {
                throw ConsoleError.badRequest("The upload is not a well-formed multipart form.")
            }
            if csrfAccepted == false { throw ConsoleError.csrfRefused }
        }
        guard csrfAccepted == true else { throw ConsoleError.csrfRefused }
        return ConsoleUpload(parts: parts)
    }

    /// The `filename` parameter of a part's `Content-Disposition` (MultipartKit 4 reads only
    /// `name`), unquoted.
    static func fileName(of part: MultipartPart) -> String? {
        guard let disposition = part.headers.first(name: "Content-Disposition") else { return nil }
        for piece in disposition.split(separator: ";") {
            let trimmed = piece.trimmingCharacters(in: .whitespaces)
            guard trimmed.lowercased().hasPrefix("filename=") else { continue }
            var value = Substring(trimmed.dropFirst("filename=".count))
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            return String(value)
        }
        return nil
    }
}
