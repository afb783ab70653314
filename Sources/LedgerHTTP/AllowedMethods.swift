import Hummingbird

/// The methods each routed path takes, for `405 Method Not Allowed` with `Allow`: Hummingbird's
/// router answers a known path with an unrouted method as it does an unknown path (404), and
/// its per-path method table is not public, so the routes' own descriptions are matched here
/// with the router's segment rule.
struct AllowedMethods: Sendable {
    private let entries: [(components: [RouterPath.Element], methods: Set<String>)]

    init(_ routes: [Router<LedgerRequestContext>.RouteDescription]) {
        var byPath: [String: (components: [RouterPath.Element], methods: Set<String>)] = [:]
        for route in routes {
            byPath[route.path.description, default: (route.path.components, [])].methods.insert(route.method.rawValue)
        }
        entries = Array(byPath.values)
    }

    /// The `Allow` value for `path` when some route has it, else nil (the path is unknown).
    func allow(for path: String) -> String? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods = Set<String>()
        for entry in entries where entry.components.count == segments.count {
            if zip(entry.components, segments).allSatisfy({ element, segment in element ~= segment }) {
                methods.formUnion(entry.methods)
            }
        }
        return methods.isEmpty ? nil : methods.sorted().joined(separator: ", ")
    }
}
