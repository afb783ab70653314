import HTTPTypes

/// The console's cookies: the session, and at sign-in a one-time value the form repeats
/// (double submit), so a sign-in cannot be forged from another site either.
struct ConsoleCookies: Sendable {
    static let session = "pl_console"
    static let signIn = "pl_console_signin"
    /// `LEDGER_CONSOLE_INSECURE_COOKIES=1`: plain HTTP on a laptop, where a Secure cookie is
    /// never sent back.
    let insecure: Bool

    /// HttpOnly (no script reads it), SameSite=Strict (no other site sends it), Secure unless
    /// told, scoped to the console's paths.
    func set(_ name: String, _ value: String, maxAge: Int) -> String {
        var parts = ["\(name)=\(value)", "Path=/console", "HttpOnly", "SameSite=Strict", "Max-Age=\(maxAge)"]
        if !insecure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }

    func clear(_ name: String) -> String { set(name, "", maxAge: 0) }

    /// The value of cookie `name` in the request's Cookie headers, if any.
    static func value(_ name: String, in headers: HTTPFields) -> String? {
        for header in headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                if let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name {
                    return String(trimmed[trimmed.index(after: equals)...])
                }
            }
        }
        return nil
    }
}
