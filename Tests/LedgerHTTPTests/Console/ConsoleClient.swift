import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A cookie-keeping HTTP client for the console that does not follow redirects, so tests see
/// each 303 and each Set-Cookie as a browser receives them.
final class ConsoleClient: @unchecked Sendable {
    struct Page: Sendable {
        var status: Int
        var body: String
        var headers: [(String, String)]
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var setCookies: [String] { headers.filter { $0.0.lowercased() == "set-cookie" }.map(\.1) }
    }

    let base: String
    private let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
    private let lock = NSLock()
    private var jar: [String: String] = [:]

    init(base: String) { self.base = base }

    func shutdown() async { try? await client.shutdown() }

    var cookies: [String: String] { lock.withLock { jar } }
    func setCookie(_ name: String, _ value: String?) { lock.withLock { jar[name] = value } }

    func get(_ path: String) async throws -> Page { try await send(.GET, path, body: nil, contentType: nil) }

    func postForm(_ path: String, _ fields: [(String, String)]) async throws -> Page {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        return try await send(.POST, path, body: Array(body.utf8), contentType: "application/x-www-form-urlencoded")
    }

    func postFile(_ path: String, field: String, fileName: String, bytes: [UInt8], fields: [(String, String)]) async throws -> Page {
        let boundary = "----console-test-\(UUID().uuidString)"
        var body: [UInt8] = []
        for (name, value) in fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(fileName)\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
        body += bytes
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        return try await send(.POST, path, body: body, contentType: "multipart/form-data; boundary=\(boundary)")
    }

    private func send(_ method: HTTPMethod, _ path: String, body: [UInt8]?, contentType: String?) async throws -> Page {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        let cookieHeader = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        if !cookieHeader.isEmpty { request.headers.add(name: "Cookie", value: cookieHeader) }
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 32 << 20)
        let headers = response.headers.map { ($0.name, $0.value) }
        for (name, value) in headers where name.lowercased() == "set-cookie" {
            let pair = value.split(separator: ";")[0]
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let cookie = String(pair[..<equals]), content = String(pair[pair.index(after: equals)...])
            setCookie(cookie, value.contains("Max-Age=0") || content.isEmpty ? nil : content)
        }
        return Page(status: Int(response.status.code), body: String(buffer: bytes), headers: headers)
    }

    /// The value of a hidden input in a page.
    static func hidden(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    /// Signs in with `token` through the form; returns the final status of the POST.
    func signIn(_ token: String) async throws -> Page {
        let form = try await get("/console/sign-in")
        return try await postForm("/console/sign-in", [("token", token), ("csrf", Self.hidden("csrf", in: form.body) ?? "")])
    }
}
