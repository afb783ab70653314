import AppStore

/// An App Store Connect report (Sales and Trends summary sales, or a financial report) imported
/// to reconcile against: the file is kept verbatim as a document, and its in-app purchase lines
/// as parsed at import, so the comparison is a function of the log (a replay redoes it) and a
/// later parser never changes what a past import said. One stream per file content: importing
/// the same file again records nothing.
public struct AppStoreReportImported: LedgerEventPayload {
    public static let eventType = "AppStoreReportImported"

    /// The sha256 of the file as uploaded (decompressed when it came gzipped), which names the
    /// document and the stream.
    public var documentSha256: String
    public var fileName: String?
    /// `sales` or `financial`.
    public var kind: String
    public var periodStart: String
    public var periodEnd: String
    public var lines: [AppStoreReportLine]

    public init(documentSha256: String, fileName: String?, kind: String, periodStart: String, periodEnd: String, lines: [AppStoreReportLine]) {
        self.documentSha256 = documentSha256
        self.fileName = fileName
        self.kind = kind
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.lines = lines
    }
}
