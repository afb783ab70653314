import AppStore
import CompressNIO
import EventStore
import Foundation
import Ledger
import LedgerStore
import NIOCore

/// One App Store Connect report as imported.
public struct ImportedReport: Sendable, Hashable {
    public var report: AppStoreReportImported
    /// True when this file had been imported before: nothing new was recorded.
    public var alreadyImported: Bool
}

/// Imports App Store Connect reports into the log. Needs no Apple credentials or bundle id: a
/// report is evidence finance brings, not something the purchase flow decides on.
public struct ReportImporter: Sendable {
    let log: LedgerLog
    let reads: LedgerReads

    public init(store: EventStore) {
        self.log = LedgerLog(store: store)
        self.reads = LedgerReads(pool: store.pool)
    }

    /// The largest report accepted, decompressed: a year of daily lines for a large catalog is a
    /// few megabytes; this bounds a gzip bomb.
    public static let maximumReportBytes = 64 << 20

    /// Imports an App Store Connect sales or financial report (gzip or not): keeps the file
    /// verbatim as a document and records its in-app purchase lines as `AppStoreReportImported`,
    /// once per file content.
    public func importReport(_ bytes: [UInt8], fileName: String?, metadata: RequestMetadata) async throws -> ImportedReport {
        let text = try Self.reportText(bytes)
        let parsed: AppStoreReport
        do throws(AppStoreReportError) {
            parsed = try AppStoreReport.parse(text)
        } catch {
            throw LedgerServiceError(.invalidRequest, "\(fileName ?? "the file"): \(error.message)")
        }
        let content = Array(text.utf8)
        let document = DocumentStore.insert(content, kind: "app_store_report")
        let event = AppStoreReportImported(
            documentSha256: document.name, fileName: fileName.map { String($0.suffix(200)) }, kind: parsed.kind.rawValue,
            periodStart: parsed.periodStart, periodEnd: parsed.periodEnd, lines: parsed.lines)
        return try await mappingDatabaseErrors {
            do {
                try await log.append(
                    [LedgerAppend(stream: Streams.appStoreReport(document.name), expectation: .noStream, events: [.appStoreReportImported(event)])],
                    metadata: metadata, alongside: [document.statement])
                return ImportedReport(report: event, alreadyImported: false)
            } catch EventStoreError.Code.wrongExpectedVersion {
                guard let earlier = try await reads.appStoreReport(document.name) else {
                    throw LedgerServiceError(.busy, "the report's stream exists but holds no import")
                }
                return ImportedReport(report: earlier, alreadyImported: true)
            }
        }
    }

    /// The report's text: gunzipped when it starts with gzip's magic bytes, and UTF-8.
    static func reportText(_ bytes: [UInt8]) throws -> String {
        var content = bytes
        if bytes.starts(with: [0x1f, 0x8b]) {
            var buffer = ByteBuffer(bytes: bytes)
            do {
                let inflated = try buffer.decompress(with: .gzip(), maxSize: maximumReportBytes)
                content = Array(inflated.readableBytesView)
            } catch {
                throw LedgerServiceError(.invalidRequest, "the file looks gzipped but does not decompress (or is over \(maximumReportBytes >> 20) MB)")
            }
        }
        guard content.count <= maximumReportBytes else {
            throw LedgerServiceError(.invalidRequest, "the report is over \(maximumReportBytes >> 20) MB")
        }
        guard let text = String(validating: content, as: UTF8.self) else {
            throw LedgerServiceError(.invalidRequest, "the report is not UTF-8 text: App Store Connect's reports are tab-separated text, gzip or not")
        }
        return text
    }
}
