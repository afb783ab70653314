import Hummingbird

/// The console's cookies: the session, and at sign-in a one-time value the form repeats
/// (double submit), so a sign-in cannot be forged from another site either. Written with
/// Hummingbird's `Cookie` and read with `request.cookies`.
struct ConsoleCookies: Sendable {
    static let session = "pl_console"
    static let signIn = "pl_console_signin"
    /// `LEDGER_CONSOLE_INSECURE_COOKIES=1`: plain HTTP on a laptop, where a Secure cookie is
    /// never sent back.
    let insecure: Bool

    /// HttpOnly (no script reads it), SameSite=Strict (no other site sends it), Secure unless
    /// told, scoped to the console's paths, for `maxAge` seconds. `value` is base64url (the
    /// console's random tokens), which a cookie may hold as it is.
    func set(_ name: String, _ value: String, maxAge: Int) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/console", secure: !insecure, httpOnly: true, sameSite: .strict)
    }

    /// Tells the browser to forget cookie `name` (empty, Max-Age=0).
    func clear(_ name: String) -> Cookie { set(name, "", maxAge: 0) }

    /// The value of cookie `name` the request sent, if any.
    static func value(_ name: String, in request: Request) -> String? {
        request.cookies[name]?.value
    }
}
