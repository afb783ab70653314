import Mustache
import Primitives

/// HTML escaping for everything the console writes: each template's `{{x}}` (through the
/// `CONSOLE_HTML` content type every template names first) and the charts it draws, by
/// `HTMLText.escape` (byte by byte, docs in Primitives).
enum ConsoleHTML {
    static func escape(_ text: String) -> String {
        HTMLText.escape(text)
    }

    /// The content type's name, as each template's first tag names it.
    static let contentTypeName = "CONSOLE_HTML"

    /// Registered before the templates are read: Mustache looks content types up by name as it
    /// parses. Every registration is the same value, so registering again is harmless.
    static func registerContentType() {
        MustacheContentTypes.register(ContentType(), named: contentTypeName)
    }

    private struct ContentType: MustacheContentType {
        func escapeText(_ text: String) -> String { ConsoleHTML.escape(text) }
    }
}
