import Foundation
import MultipartKit
import NIOCore

/// A `multipart/form-data` body, as a file upload form sends it: each part by field name, with
/// the file name the browser gave.
struct ConsoleUpload {
    struct Part { var fileName: String?; var bytes: [UInt8] }
    private(set) var parts: [String: Part] = [:]

    init(body: ByteBuffer, contentType: String?) throws {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data"),
              let boundary = Self.parameter("boundary", in: contentType)
        else { throw ConsoleError.badRequest("Send the report with the page's upload form (multipart/form-data).") }
        let parser = MultipartParser(boundary: boundary)
        var headers: [String: String] = [:]
        var content: [UInt8] = []
        var collected: [String: Part] = [:]
        parser.onHeader = { name, value in headers[name.lowercased()] = value }
        parser.onBody = { buffer in content += buffer.readBytes(length: buffer.readableBytes) ?? [] }
        parser.onPartComplete = {
            let disposition = headers["content-disposition"] ?? ""
            if let name = Self.parameter("name", in: disposition) {
                collected[name] = Part(fileName: Self.parameter("filename", in: disposition), bytes: content)
            }
            headers = [:]
            content = []
        }
        do {
            try parser.execute(body)
        } catch {
            throw ConsoleError.badRequest("The upload is not a well-formed multipart form.")
        }
        parts = collected
    }

    subscript(name: String) -> Part? { parts[name] }

    /// `name=value` or `name="value"` in a header's parameters.
    static func parameter(_ name: String, in header: String) -> String? {
        for piece in header.split(separator: ";") {
            let trimmed = piece.trimmingCharacters(in: .whitespaces)
            guard trimmed.lowercased().hasPrefix(name + "=") else { continue }
            var value = String(trimmed.dropFirst(name.count + 1))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value
        }
        return nil
    }
}
