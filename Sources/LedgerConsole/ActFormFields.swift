import Foundation

/// The look-up's "Extend renewal date" form, and its confirmation (`request_id`, `confirm=1`).
struct ExtendForm: ConsoleFormWithCSRF {
    var csrf: String?
    var original: String?
    var days: String?
    var reason: String?
    var note: String?
    var requestId: String?
    var confirm: String?

    enum CodingKeys: String, CodingKey {
        case csrf, original = "original_transaction_id", days, reason, note, requestId = "request_id", confirm
    }
}

/// The look-up's "Attach a user's app account token" form, and its confirmation (`confirm=1`).
struct AppAccountTokenForm: ConsoleFormWithCSRF {
    var csrf: String?
    var original: String?
    var token: String?
    var reason: String?
    var confirm: String?

    enum CodingKeys: String, CodingKey {
        case csrf, original = "original_transaction_id", token = "app_account_token", reason, confirm
    }
}

/// The acts' fields, checked as the HTTP API checks them (LedgerHTTP's `APIBodies`).
enum ActInput {
    /// An id: 1 to 200 printable characters without spaces.
    static func identifier(_ value: String?, _ what: String) throws -> String {
        guard let value, (1...200).contains(value.count), value.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value != 0x7F }) else {
            throw ConsoleError.badRequest("\(what) must be 1 to 200 printable characters without spaces.")
        }
        return value
    }

    /// Required text typed by support: one line of at most 500 characters (the API's limit for a
    /// reason), spaces around it trimmed.
    static func line(_ value: String?, _ what: String) throws -> String {
        let text = (value ?? "").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw ConsoleError.badRequest("\(what) is required.") }
        guard text.count <= 500, text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) }) else {
            throw ConsoleError.badRequest("\(what) is one line of at most 500 characters.")
        }
        return text
    }
}

extension ConsoleError {
    /// 403: a role that may not act (finance) sent an act's form.
    static let actRefused = ConsoleError(
        status: .forbidden, message: "Only support asks Apple to change a purchase; a finance session cannot. Nothing was changed.",
        title: "Not for this role")
}
