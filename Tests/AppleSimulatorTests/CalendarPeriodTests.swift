import AppleSimulator
import Foundation
import Testing

/// Subscription periods in calendar months, counted from the first period's start as Apple
/// counts them: the anchor's day of month is kept, clamped to the end of shorter months.
@Suite("subscriptions renew on calendar dates")
struct CalendarPeriodTests {
    /// Milliseconds since 1970 of an ISO 8601 instant such as "2024-02-29T10:00:00Z".
    static func ms(_ iso: String) -> Int64 {
        let date = ISO8601DateFormatter().date(from: iso) ?? .distantPast
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The default catalog without free trials, on a clock starting at `start`.
    static func configuration(start: String) -> AppleSimulator.Configuration {
        var configuration = SimulatorHarness.configuration(notificationVersions: [.v2])
        configuration.start = Date(timeIntervalSince1970: Double(ms(start)) / 1000)
        configuration.products = SimulatedProduct.defaultCatalog.map { product in
            var product = product
            product.trialDays = nil
            return product
        }
        return configuration
    }

    @Test("a plan keeps its anchor day: bought Jan 31, it renews on the last day of shorter months", arguments: [
        // Leap year: February has 29 days.
        ("com.example.pro.monthly", "2024-01-31T10:00:00Z",
         ["2024-02-29T10:00:00Z", "2024-03-31T10:00:00Z", "2024-04-30T10:00:00Z", "2024-05-31T10:00:00Z"]),
        // Common year: February has 28.
        ("com.example.pro.monthly", "2023-01-31T10:00:00Z",
         ["2023-02-28T10:00:00Z", "2023-03-31T10:00:00Z", "2023-04-30T10:00:00Z"]),
        // A yearly plan bought on Feb 29 renews on Feb 28 until the next leap year.
        ("com.example.pro.yearly", "2024-02-29T10:00:00Z",
         ["2025-02-28T10:00:00Z", "2026-02-28T10:00:00Z", "2027-02-28T10:00:00Z", "2028-02-29T10:00:00Z"]),
    ])
    func anchorDay(productId: String, start: String, expiries: [String]) async throws {
        let simulator = try AppleSimulator(configuration: Self.configuration(start: start))
        let purchase = try await simulator.purchase(appleId: "calendar", productId: productId)
        #expect(!purchase.transaction.isTrialPeriod)
        // Step the clock just past each period's end, so each renewal happens on its own.
        for _ in expiries.dropFirst() {
            let end = try simulator.subscription(purchase.transactionId).expiresDateMs
            try await simulator.advance(by: .milliseconds(end - simulator.nowMilliseconds + 1000))
        }

        let history = simulator.transactions(of: "calendar")
        #expect(history.map(\.expiresDateMs) == expiries.map { Optional(Self.ms($0)) })
        // Each renewal starts where the previous period ended.
        #expect(history.map(\.purchaseDateMs) == ([start] + expiries.dropLast()).map { Self.ms($0) })
        #expect(history.dropFirst().allSatisfy { $0.transactionReason == "RENEWAL" })
        let subscription = try simulator.subscription(purchase.transactionId)
        #expect(subscription.periodAnchorMs == Self.ms(start))
        #expect(subscription.periodsSinceAnchor == expiries.count)
        #expect(simulator.sentNotifications.map(\.notificationType)
            == ["SUBSCRIBED"] + Array(repeating: "DID_RENEW", count: expiries.count - 1))
    }

    @Test("after a free trial, the months count from the trial's end")
    func afterTrial() async throws {
        var configuration = Self.configuration(start: "2024-01-24T10:00:00Z")
        configuration.products = SimulatedProduct.defaultCatalog
        let simulator = try AppleSimulator(configuration: configuration)
        let purchase = try await simulator.purchase(appleId: "trial", productId: "com.example.pro.monthly")
        #expect(purchase.transaction.expiresDateMs == Self.ms("2024-01-31T10:00:00Z"))
        try await simulator.advance(days: 40)
        #expect(simulator.transactions(of: "trial").map(\.expiresDateMs) == [
            Self.ms("2024-01-31T10:00:00Z"), Self.ms("2024-02-29T10:00:00Z"), Self.ms("2024-03-31T10:00:00Z"),
        ])
    }

    @Test("a billing recovery moves the renewal date to the day of recovery")
    func recoveryRestartsTheMonths() async throws {
        let simulator = try AppleSimulator(configuration: Self.configuration(start: "2024-01-31T10:00:00Z"))
        let purchase = try await simulator.purchase(appleId: "card", productId: "com.example.pro.monthly")
        try await simulator.setBillingFails(originalTransactionId: purchase.transactionId, true)
        try await simulator.advance(by: .milliseconds(Self.ms("2024-03-05T10:00:00Z") - simulator.nowMilliseconds))
        let recovered = try #require(try await simulator.setBillingFails(originalTransactionId: purchase.transactionId, false))
        #expect(recovered.purchaseDateMs == Self.ms("2024-03-05T10:00:00Z"))
        #expect(recovered.expiresDateMs == Self.ms("2024-04-05T10:00:00Z"))
    }
}
