import Hummingbird
import NIOCore

/// The control API's App Store Connect reports, as tab-separated text like Apple's downloads
/// (uncompressed; Apple's come gzipped):
/// - `GET /control/reports/sales?date=YYYY-MM-DD`: the summary sales report of one Pacific day;
/// - `GET /control/reports/financial?from=YYYY-MM-DD&to=YYYY-MM-DD`: the financial detail report
///   of those Pacific days.
extension ControlRoutes {
    func registerReports(on control: RouterGroup<BasicRequestContext>) {
        control.get("reports/sales") { request, _ in
            try await handle {
                let day = try Self.query("date", of: request)
                return try Self.tabSeparated(simulator.salesSummaryReport(day: day))
            }
        }
        control.get("reports/financial") { request, _ in
            try await handle {
                let from = try Self.query("from", of: request)
                let to = try Self.query("to", of: request)
                return try Self.tabSeparated(simulator.financialReport(from: from, to: to))
            }
        }
    }

    /// A required query parameter; its absence is the caller's error (400).
    private static func query(_ name: String, of request: Request) throws -> String {
        guard let value = request.uri.queryParameters[Substring(name)], !value.isEmpty else {
            throw SimulatorError(.invalidRequest, "give ?\(name)=YYYY-MM-DD")
        }
        return String(value)
    }

    private static func tabSeparated(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/tab-separated-values; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
