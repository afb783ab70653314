import Ledger
import Postgres

/// A page's row changes as few statements: changes that commute (balance deltas, merged
/// subscription entries, timeline rows, history rows) or keep the newest (owners, renewal
/// state) are combined in Swift by the rules their upserts state, then written with one
/// multi-row statement per kind (arrays through `unnest`, so each text is fixed and prepared).
/// Changes whose result depends on the rows before them (revenue lines and prices, unions of
/// Apple accounts) keep their order and their own statements: their time is in each line's
/// look-ups and index entries, not in the statements, so combining them does not pay
/// (docs/benchmarks.md, 'Why the code is shaped so'). The result is the same rows as applying every
/// change one by one: the replay's dry run compares exactly that (the server's runner applies
/// small pages, a rebuild large ones) and finds nothing to change.
struct ProjectionBatch {
    /// The app written for a change that names none: the runner hands projections events with
    /// the log's legacy app filled in (`LedgerEvent.withApp`), so only a log that names no app
    /// yet (never served by this release) has such changes.
    private static let unknownApp = ""
    private var balances: [Key3: Int64] = [:]
    private var balanceOrder: [Key3] = []
    private var owners: [String: (app: String, user: String, product: String, kind: String, environment: String)] = [:]
    private var ownerOrder: [String] = []
    private var revocations: [String: Int64] = [:]
    private var entries: [Key2: (environment: String, entry: SubscriptionEntry)] = [:]
    private var entryOrder: [Key2] = []
    private var renewals: [String: RenewalObservation] = [:]
    private var renewalOrder: [String] = []
    private var observations: Set<ObservationRow> = []
    private var observationOrder: [ObservationRow] = []
    private var holders: [String: (app: String, product: String, kind: String, environment: String, user: String?, position: Int64)] = [:]
    private var holderOrder: [String] = []
    private var history: [(original: String, position: Int64, at: Int64, user: String?, reason: String)] = []
    private var members: [String: String?] = [:]
    private var memberOrder: [String] = []
    private var timelineEvents: [(String, Int64)] = []
    private var timelineLinks: [(String, String)] = []
    private var webhookEvents: [WebhookEvent] = []
    /// The page's links so far: the same link comes with every event of an order or a
    /// submission, and each repeat sent cost PostgreSQL an index probe to skip it.
    private var linked: Set<Key2> = []
    /// In log order, after the combined statements.
    private var ordered: [SQL] = []
    /// Whether `ordered` ends under generic plans (`revenue(_:)`).
    private var genericPlans = false
    /// A run of sales not yet in `ordered`: written as one statement when the run ends.
    private var sales: [RevenueSale] = []

    private struct Key2: Hashable {
        var a: String
        var b: String
    }

    /// A row of `projection_renewal_observations`, its unknowns written as the table has them.
    private struct ObservationRow: Hashable {
        var original: String
        var observedAtMs: Int64
        var inBillingRetry: Int64
        var graceExpiresMs: Int64
    }

    private struct Key3: Hashable {
        var a: String
        var b: String
        var c: String
    }

    mutating func add(_ change: ProjectionChange) {
        switch change {
        case .addToBalance(let app, let user, let unit, let delta):
            let key = Key3(a: app ?? Self.unknownApp, b: user, c: unit)
            if balances[key] == nil { balanceOrder.append(key) }
            balances[key, default: 0] += delta
        case .setOwner(let original, let app, let user, let product, let kind, let environment):
            if let first = owners[original] {
                owners[original] = (first.app, user, first.product, first.kind, first.environment)
            } else {
                ownerOrder.append(original)
                owners[original] = (app ?? Self.unknownApp, user, product, kind.rawValue, environment)
            }
        case .revokeOwnership(let original, let at):
            revocations[original] = min(revocations[original] ?? at, at)
        case .mergeSubscriptionEntry(let original, let environment, let entry):
            let key = Key2(a: original, b: entry.transactionId)
            guard let (firstEnvironment, known) = entries[key] else {
                entryOrder.append(key)
                entries[key] = (environment, entry)
                return
            }
            // The upsert's rules below, in Swift.
            entries[key] = (firstEnvironment, known.merged(with: entry))
        case .observeRenewal(let original, let renewal):
            guard let known = renewals[original] else {
                renewalOrder.append(original)
                renewals[original] = renewal
                return
            }
            if Self.rank(renewal) > Self.rank(known) { renewals[original] = renewal }
        case .changeOwner(let original, let app, let product, let kind, let environment, let user, let reason, let place):
            history.append((original, place.position, place.recordedAtMs, user, reason))
            if let known = holders[original] {
                if place.position > known.position {
                    holders[original] = (known.app, known.product, known.kind, known.environment, user, place.position)
                }
            } else {
                holderOrder.append(original)
                holders[original] = (app ?? Self.unknownApp, product, kind.rawValue, environment, user, place.position)
            }
        case .linkAppleAccount(let originals, let appTransactionId):
            for original in originals {
                if let known = members[original] {
                    members[original] = [known, appTransactionId].compactMap { $0 }.min()
                } else {
                    memberOrder.append(original)
                    members[original] = appTransactionId
                }
            }
            // The union itself, after every member of the page is in.
            if let union = ProjectionSQL.uniteAppleAccount(originals, appTransactionId: appTransactionId) { append([union]) }
        case .timelineEvent(let subject, let position):
            timelineEvents.append((subject, position))
        case .timelineLink(let subject, let includes):
            if linked.insert(Key2(a: subject, b: includes)).inserted { timelineLinks.append((subject, includes)) }
        case .setCatalogPrice(let app, let product, let price, let currency, let effective):
            append([ProjectionSQL.catalogPrice(app ?? Self.unknownApp, product, price, currency, effectiveMs: effective)])
        case .addRevenueSale(let sale):
            sales.append(sale)
        case .addRevenueRefund(let transaction, let atMs, let fraction):
            revenue(ProjectionSQL.revenueRefund(transaction, atMs: atMs, fractionMilli: fraction))
        case .addRevenueReversal(let transaction, let atMs, let fraction):
            revenue(ProjectionSQL.revenueReversal(transaction, atMs: atMs, fractionMilli: fraction))
        case .setRevenueTransactionInfo(let transaction, let country, let applePrice):
            append(ProjectionSQL.transactionInfo(transaction, country: country, applePrice: applePrice))
        case .setPricePoints(let app, let product, let refreshedAtMs, let points):
            append(ProjectionSQL.pricePoints(app: app, product, refreshedAtMs: refreshedAtMs, points: points))
        case .addWebhookEvent(let message):
            webhookEvents.append(message)
        case .recordRenewalObservation(let original, let renewal):
            let row = ObservationRow(
                original: original, observedAtMs: renewal.observedAtMs, inBillingRetry: renewal.inBillingRetry.map { $0 ? 1 : 0 } ?? -1,
                graceExpiresMs: renewal.gracePeriodExpiresMs ?? 0)
            if observations.insert(row).inserted { observationOrder.append(row) }
        case .restoreOwnership(let original):
            // After the page's combined revocations: a refund and its reversal in one page end restored.
            append([.prepared("UPDATE projection_entitlements SET revoked_at_ms = NULL WHERE original_transaction_id = \(original)")])
        case .clearSubscriptionCancellation(let original, let transaction):
            // After the page's combined entry merges, which keep the earliest cancellation.
            append([.prepared("""
                UPDATE projection_subscription_entries SET cancellation_date_ms = NULL
                WHERE original_transaction_id = \(original) AND transaction_id = \(transaction)
                """)])
        }
    }

    /// A sale's, refund's or reversal's revenue statements, under generic plans. PostgreSQL
    /// planned each afresh (a custom plan per call, its parameters being few and the plan
    /// cheap): 138 µs of planning against 65 µs of executing a sale, the largest part of a
    /// rebuild (docs/benchmarks.md, 2026-11-26 evening). Their generic plans are the same index
    /// look-ups. Other statements keep PostgreSQL's choice: a state look-up by `= ANY` ran 4×
    /// slower generic, and a price refresh's plan depends on whether it is the product's first.
    private mutating func revenue(_ statements: [SQL]) {
        let run = ProjectionSQL.revenueSales(sales)
        sales = []
        let statements = run + statements
        guard !statements.isEmpty else { return }
        if !genericPlans {
            ordered.append(Self.planCache("force_generic_plan"))
            genericPlans = true
        }
        ordered += statements
    }

    /// Appends to `ordered`, leaving generic plans first if a revenue statement came last.
    private mutating func append(_ statements: [SQL]) {
        revenue([])
        if genericPlans {
            ordered.append(Self.planCache("auto"))
            genericPlans = false
        }
        ordered += statements
    }

    private static func planCache(_ mode: String) -> SQL { .prepared("SELECT set_config('plan_cache_mode', \(mode), true)") }

    /// The renewal upsert's order: newest first, ties broken by the whole row (NULLs made
    /// comparable), so the result does not depend on which was applied first.
    private static func rank(_ r: RenewalObservation) -> (Int64, String, String, String, Int64) {
        func text(_ flag: Bool?) -> String { flag.map { $0 ? "true" : "false" } ?? "" }
        return (r.observedAtMs, text(r.autoRenew), text(r.inBillingRetry), r.autoRenewProductId ?? "", r.gracePeriodExpiresMs ?? -1)
    }

    private static func texts(_ values: [String?]) -> PostgresArray { PostgresArray(values) }
    private static func integers(_ values: [Int64?]) -> PostgresArray { PostgresArray(values) }
    private static func flags(_ values: [Bool?]) -> PostgresArray { PostgresArray(values.map { $0.map { $0 ? "t" : "f" } }) }

    /// The statements, combined ones first (members before their unions), then the ordered ones.
    var statements: [SQL] { writes(copying: false).statements }

    /// Rows a rebuild sends by COPY instead of a statement: a table that only grows, one row
    /// per event or link, and no earlier row to meet (each event is applied once, by its
    /// checkpoint, and the set tables are keyed only after the rebuild).
    struct CopyRows {
        var table: String
        var columns: [String]
        var rows: [[String?]]
    }

    /// The tables whose rows `writes(copying: true)` sends by COPY.
    static let copiedTables: Set<String> = ["projection_timeline_events", "projection_timeline_links", "projection_webhook_events"]

    /// The statements, and with `copying` (a rebuild's tables, not keyed yet) the rows of the
    /// tables that only grow as COPY rows instead of statements.
    func writes(copying: Bool) -> (statements: [SQL], copies: [CopyRows]) {
        var sql: [SQL] = []
        var copies: [CopyRows] = []
        if !balanceOrder.isEmpty {
            sql.append(.prepared("""
                INSERT INTO projection_app_balances (bundle_id, user_id, unit, amount)
                SELECT * FROM unnest(\(Self.texts(balanceOrder.map(\.a)))::text[], \(Self.texts(balanceOrder.map(\.b)))::text[],
                                     \(Self.texts(balanceOrder.map(\.c)))::text[], \(Self.integers(balanceOrder.map { balances[$0] }))::bigint[])
                ON CONFLICT (bundle_id, user_id, unit) DO UPDATE SET amount = projection_app_balances.amount + excluded.amount
                """))
        }
        if !ownerOrder.isEmpty {
            let rows = ownerOrder.compactMap { owners[$0] }
            sql.append(.prepared("""
                INSERT INTO projection_entitlements (original_transaction_id, bundle_id, user_id, product_id, kind, environment)
                SELECT * FROM unnest(\(Self.texts(ownerOrder))::text[], \(Self.texts(rows.map(\.app)))::text[], \(Self.texts(rows.map(\.user)))::text[],
                                     \(Self.texts(rows.map(\.product)))::text[], \(Self.texts(rows.map(\.kind)))::text[],
                                     \(Self.texts(rows.map(\.environment)))::text[])
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    user_id = excluded.user_id, bundle_id = coalesce(projection_entitlements.bundle_id, excluded.bundle_id)
                """))
        }
        if !revocations.isEmpty {
            let keys = revocations.keys.sorted()
            sql.append(.prepared("""
                UPDATE projection_entitlements e SET revoked_at_ms = least(coalesce(e.revoked_at_ms, r.at), r.at)
                FROM unnest(\(Self.texts(keys))::text[], \(Self.integers(keys.map { revocations[$0] }))::bigint[]) AS r(original, at)
                WHERE e.original_transaction_id = r.original
                """))
        }
        if !entryOrder.isEmpty {
            let rows = entryOrder.compactMap { entries[$0] }
            let commitments = rows.map(\.entry.commitment)
            // `SubscriptionEntry.merged(with:)` states the same rules.
            sql.append(.prepared("""
                INSERT INTO projection_subscription_entries
                    (original_transaction_id, transaction_id, product_id, environment, purchase_date_ms, expires_date_ms,
                     cancellation_date_ms, is_trial, is_upgraded, billing_plan_type, commitment_period_number,
                     commitment_total_periods, commitment_price_milliunits, commitment_expires_ms, price_milliunits, currency)
                SELECT * FROM unnest(\(Self.texts(entryOrder.map(\.a)))::text[], \(Self.texts(entryOrder.map(\.b)))::text[],
                                     \(Self.texts(rows.map(\.entry.productId)))::text[], \(Self.texts(rows.map(\.environment)))::text[],
                                     \(Self.integers(rows.map(\.entry.purchaseDateMs)))::bigint[], \(Self.integers(rows.map(\.entry.expiresDateMs)))::bigint[],
                                     \(Self.integers(rows.map(\.entry.cancellationDateMs)))::bigint[], \(Self.flags(rows.map(\.entry.isTrial)))::boolean[],
                                     \(Self.flags(rows.map(\.entry.isUpgraded)))::boolean[], \(Self.texts(rows.map(\.entry.billingPlanType)))::text[],
                                     \(Self.integers(commitments.map { $0?.periodNumber }))::bigint[],
                                     \(Self.integers(commitments.map { $0?.totalPeriods }))::bigint[],
                                     \(Self.integers(commitments.map { $0?.priceMilliunits }))::bigint[],
                                     \(Self.integers(commitments.map { $0?.expiresDateMs }))::bigint[],
                                     \(Self.integers(rows.map(\.entry.priceMilliunits)))::bigint[], \(Self.texts(rows.map(\.entry.currency)))::text[])
                ON CONFLICT (original_transaction_id, transaction_id) DO UPDATE SET
                    purchase_date_ms = coalesce(projection_subscription_entries.purchase_date_ms, excluded.purchase_date_ms),
                    expires_date_ms = greatest(projection_subscription_entries.expires_date_ms, excluded.expires_date_ms),
                    cancellation_date_ms = least(projection_subscription_entries.cancellation_date_ms, excluded.cancellation_date_ms),
                    is_trial = projection_subscription_entries.is_trial OR excluded.is_trial,
                    is_upgraded = projection_subscription_entries.is_upgraded OR excluded.is_upgraded,
                    billing_plan_type = coalesce(projection_subscription_entries.billing_plan_type, excluded.billing_plan_type),
                    commitment_period_number = coalesce(projection_subscription_entries.commitment_period_number, excluded.commitment_period_number),
                    commitment_total_periods = coalesce(projection_subscription_entries.commitment_total_periods, excluded.commitment_total_periods),
                    commitment_price_milliunits = coalesce(projection_subscription_entries.commitment_price_milliunits, excluded.commitment_price_milliunits),
                    commitment_expires_ms = coalesce(projection_subscription_entries.commitment_expires_ms, excluded.commitment_expires_ms),
                    price_milliunits = coalesce(projection_subscription_entries.price_milliunits, excluded.price_milliunits),
                    currency = coalesce(projection_subscription_entries.currency, excluded.currency)
                """))
        }
        if !renewalOrder.isEmpty {
            // The page's newest per subscription (`rank`), kept only when newer than the row's.
            let rows = renewalOrder.compactMap { renewals[$0] }
            sql.append(.prepared("""
                INSERT INTO projection_subscription_renewals
                    (original_transaction_id, observed_at_ms, auto_renew, auto_renew_product_id, in_billing_retry, grace_period_expires_ms)
                SELECT * FROM unnest(\(Self.texts(renewalOrder))::text[], \(Self.integers(rows.map(\.observedAtMs)))::bigint[],
                                     \(Self.flags(rows.map(\.autoRenew)))::boolean[], \(Self.texts(rows.map(\.autoRenewProductId)))::text[],
                                     \(Self.flags(rows.map(\.inBillingRetry)))::boolean[], \(Self.integers(rows.map(\.gracePeriodExpiresMs)))::bigint[])
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    observed_at_ms = excluded.observed_at_ms, auto_renew = excluded.auto_renew,
                    auto_renew_product_id = excluded.auto_renew_product_id, in_billing_retry = excluded.in_billing_retry,
                    grace_period_expires_ms = excluded.grace_period_expires_ms
                WHERE (excluded.observed_at_ms, coalesce(excluded.auto_renew::text, ''), coalesce(excluded.in_billing_retry::text, ''),
                       coalesce(excluded.auto_renew_product_id, ''), coalesce(excluded.grace_period_expires_ms, -1))
                    > (projection_subscription_renewals.observed_at_ms, coalesce(projection_subscription_renewals.auto_renew::text, ''),
                       coalesce(projection_subscription_renewals.in_billing_retry::text, ''),
                       coalesce(projection_subscription_renewals.auto_renew_product_id, ''),
                       coalesce(projection_subscription_renewals.grace_period_expires_ms, -1))
                """))
        }
        if !holderOrder.isEmpty {
            let rows = holderOrder.compactMap { holders[$0] }
            sql.append(.prepared("""
                INSERT INTO projection_ownership (original_transaction_id, bundle_id, product_id, kind, environment, owner_user_id, owner_position)
                SELECT * FROM unnest(\(Self.texts(holderOrder))::text[], \(Self.texts(rows.map(\.app)))::text[], \(Self.texts(rows.map(\.product)))::text[],
                                     \(Self.texts(rows.map(\.kind)))::text[], \(Self.texts(rows.map(\.environment)))::text[],
                                     \(Self.texts(rows.map(\.user)))::text[], \(Self.integers(rows.map(\.position)))::bigint[])
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    owner_user_id = excluded.owner_user_id, owner_position = excluded.owner_position,
                    bundle_id = coalesce(projection_ownership.bundle_id, excluded.bundle_id)
                WHERE excluded.owner_position > projection_ownership.owner_position
                """))
            sql.append(.prepared("""
                INSERT INTO projection_ownership_history (original_transaction_id, position, recorded_at_ms, user_id, reason)
                SELECT * FROM unnest(\(Self.texts(history.map(\.original)))::text[], \(Self.integers(history.map(\.position)))::bigint[],
                                     \(Self.integers(history.map(\.at)))::bigint[], \(Self.texts(history.map(\.user)))::text[],
                                     \(Self.texts(history.map(\.reason)))::text[])
                ON CONFLICT (original_transaction_id, position) DO NOTHING
                """))
        }
        if !observationOrder.isEmpty {
            sql.append(.prepared("""
                INSERT INTO projection_renewal_observations (original_transaction_id, observed_at_ms, in_billing_retry, grace_period_expires_ms)
                SELECT * FROM unnest(\(Self.texts(observationOrder.map(\.original)))::text[], \(Self.integers(observationOrder.map(\.observedAtMs)))::bigint[],
                                     \(Self.integers(observationOrder.map(\.inBillingRetry)))::smallint[],
                                     \(Self.integers(observationOrder.map(\.graceExpiresMs)))::bigint[])
                ON CONFLICT DO NOTHING
                """))
        }
        if !memberOrder.isEmpty {
            sql.append(.prepared("""
                INSERT INTO projection_apple_account_members (original_transaction_id, root, app_transaction_id)
                SELECT id, id, app FROM unnest(\(Self.texts(memberOrder))::text[], \(Self.texts(memberOrder.map { members[$0] ?? nil }))::text[]) AS m(id, app)
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    app_transaction_id = least(projection_apple_account_members.app_transaction_id, excluded.app_transaction_id)
                """))
        }
        if copying {
            if !timelineEvents.isEmpty {
                copies.append(CopyRows(
                    table: "projection_timeline_events", columns: ["subject", "position"], rows: timelineEvents.map { [$0.0, String($0.1)] }))
            }
            if !timelineLinks.isEmpty {
                copies.append(CopyRows(table: "projection_timeline_links", columns: ["subject", "includes"], rows: timelineLinks.map { [$0.0, $0.1] }))
            }
            if !webhookEvents.isEmpty {
                copies.append(CopyRows(
                    table: "projection_webhook_events", columns: ["position", "sequence", "user_id", "type", "body", "hash_prefix", "bundle_id"],
                    rows: webhookEvents.map {
                        [String($0.position), String($0.sequence), $0.userId, $0.type.rawValue, $0.bodyText, $0.hashPrefix, $0.bundleId]
                    }))
            }
        }
        if !copying, !timelineEvents.isEmpty {
            sql.append(.prepared("""
                INSERT INTO projection_timeline_events (subject, position)
                SELECT * FROM unnest(\(Self.texts(timelineEvents.map(\.0)))::text[], \(Self.integers(timelineEvents.map(\.1)))::bigint[])
                ON CONFLICT DO NOTHING
                """))
        }
        if !copying, !timelineLinks.isEmpty {
            sql.append(.prepared("""
                INSERT INTO projection_timeline_links (subject, includes)
                SELECT * FROM unnest(\(Self.texts(timelineLinks.map(\.0)))::text[], \(Self.texts(timelineLinks.map(\.1)))::text[])
                ON CONFLICT DO NOTHING
                """))
        }
        if !copying, !webhookEvents.isEmpty {
            // The body's bytes are stored as made, so every send and every page serves the same.
            let bodies = webhookEvents.map { Optional($0.bodyText) }
            sql.append(.prepared("""
                INSERT INTO projection_webhook_events (position, sequence, user_id, type, body, hash_prefix, bundle_id)
                SELECT * FROM unnest(\(Self.integers(webhookEvents.map(\.position)))::bigint[],
                                     \(Self.integers(webhookEvents.map { Int64($0.sequence) }))::integer[],
                                     \(Self.texts(webhookEvents.map(\.userId)))::text[],
                                     \(Self.texts(webhookEvents.map(\.type.rawValue)))::text[], \(Self.texts(bodies))::text[],
                                     \(Self.texts(webhookEvents.map(\.hashPrefix)))::text[], \(Self.texts(webhookEvents.map(\.bundleId)))::text[])
                ON CONFLICT (position, sequence) DO NOTHING
                """))
        }
        var batch = self
        batch.revenue([])
        // The next projection's statements and the checkpoints keep PostgreSQL's choice.
        return (sql + batch.ordered + (batch.genericPlans ? [Self.planCache("auto")] : []), copies)
    }
}
