import Ledger
import Postgres

/// Turns a projection's row changes into SQL. Every statement is idempotent in effect or
/// commutative, matching `ProjectionChange`'s contract.
enum ProjectionSQL {
    static func statements(for change: ProjectionChange) -> [SQL] {
        switch change {
        case .changeOwner(let original, let product, let kind, let environment, let user, let reason, let place):
            // The newest position holds; the history keeps every change once, whatever the order.
            return [
                """
                INSERT INTO projection_ownership (original_transaction_id, product_id, kind, environment, owner_user_id, owner_position)
                VALUES (\(original), \(product), \(kind.rawValue), \(environment), \(user), \(place.position))
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    owner_user_id = excluded.owner_user_id, owner_position = excluded.owner_position
                WHERE excluded.owner_position > projection_ownership.owner_position
                """,
                """
                INSERT INTO projection_ownership_history (original_transaction_id, position, recorded_at_ms, user_id, reason)
                VALUES (\(original), \(place.position), \(place.recordedAtMs), \(user), \(reason))
                ON CONFLICT (original_transaction_id, position) DO NOTHING
                """,
            ]
        case .linkAppleAccount(let originals, let appTransactionId):
            // A union-find whose root is the group's smallest original_transaction_id, so the
            // groups and their names come out the same in any order of the links.
            let ids = PostgresArray(originals.map(Optional.some))
            var statements: [SQL] = [
                """
                INSERT INTO projection_apple_account_members (original_transaction_id, root, app_transaction_id)
                SELECT id, id, \(appTransactionId) FROM unnest(\(ids)::text[]) AS id
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    app_transaction_id = least(projection_apple_account_members.app_transaction_id, excluded.app_transaction_id)
                """,
            ]
            if originals.count > 1 || appTransactionId != nil {
                statements.append("""
                    WITH joined AS (
                        SELECT DISTINCT root FROM projection_apple_account_members
                        WHERE original_transaction_id = ANY(\(ids)::text[])
                           OR (\(appTransactionId)::text IS NOT NULL AND app_transaction_id = \(appTransactionId)))
                    UPDATE projection_apple_account_members SET root = (SELECT min(root) FROM joined)
                    WHERE root IN (SELECT root FROM joined) AND root <> (SELECT min(root) FROM joined)
                    """)
            }
            return statements
        case .setCatalogPrice, .addRevenueSale, .addRevenueRefund:
            return revenueStatement(for: change).map { [$0] } ?? []
        case .timelineEvent(let subject, let position):
            return ["INSERT INTO projection_timeline_events (subject, position) VALUES (\(subject), \(position)) ON CONFLICT DO NOTHING"]
        case .timelineLink(let subject, let includes):
            return ["INSERT INTO projection_timeline_links (subject, includes) VALUES (\(subject), \(includes)) ON CONFLICT DO NOTHING"]
        default:
            return [statement(for: change)]
        }
    }

    /// Revenue's statements. A sale without Apple's price takes the catalog's as the log has it
    /// at this point (pages apply in log order); its reduced rate depends on the paid service
    /// of the subscription's earlier sales.
    static func revenueStatement(for change: ProjectionChange) -> SQL? {
        switch change {
        case .setCatalogPrice(let product, let price, let currency):
            return """
                INSERT INTO projection_revenue_prices (product_id, price_minor, currency) VALUES (\(product), \(price), \(currency))
                ON CONFLICT (product_id) DO UPDATE SET price_minor = excluded.price_minor, currency = excluded.currency
                """
        case .addRevenueSale(let sale):
            let year = CommissionPlan.yearOfServiceMs
            return """
                INSERT INTO projection_revenue_lines
                    (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
                     purchase_date_ms, service_ms, currency, gross_minor, reduced_rate)
                SELECT 'sale:' || \(sale.transactionId), 'sale', \(sale.transactionId), \(sale.originalTransactionId), \(sale.productId),
                       \(sale.kind.rawValue), \(sale.userId), \(sale.environment), \(sale.day)::date, \(sale.purchaseDateMs), \(sale.serviceMs),
                       coalesce(\(sale.applePrice?.currency)::text, p.currency),
                       coalesce(\(sale.applePrice?.minorUnits)::bigint, p.price_minor * \(sale.quantity)),
                       \(sale.kind == .autoRenewable) AND (
                           SELECT coalesce(sum(service_ms), 0) FROM projection_revenue_lines e
                           WHERE e.original_transaction_id = \(sale.originalTransactionId) AND e.line_type = 'sale'
                             AND e.purchase_date_ms < \(sale.purchaseDateMs)) >= \(year)
                FROM (SELECT 1) AS one LEFT JOIN projection_revenue_prices p ON p.product_id = \(sale.productId)
                WHERE coalesce(\(sale.applePrice?.currency)::text, p.currency) IS NOT NULL
                ON CONFLICT (line_id) DO NOTHING
                """
        case .addRevenueRefund(let transaction, let day):
            return """
                INSERT INTO projection_revenue_lines
                    (line_id, line_type, transaction_id, original_transaction_id, product_id, kind, user_id, environment, day,
                     purchase_date_ms, service_ms, currency, gross_minor, reduced_rate)
                SELECT 'refund:' || transaction_id, 'refund', transaction_id, original_transaction_id, product_id, kind, user_id,
                       environment, \(day)::date, purchase_date_ms, NULL, currency, -gross_minor, reduced_rate
                FROM projection_revenue_lines WHERE line_id = 'sale:' || \(transaction)
                ON CONFLICT (line_id) DO NOTHING
                """
        default:
            return nil
        }
    }

    static func statement(for change: ProjectionChange) -> SQL {
        switch change {
        case .addToBalance(let user, let unit, let delta):
            return """
                INSERT INTO projection_balances (user_id, unit, amount) VALUES (\(user), \(unit), \(delta))
                ON CONFLICT (user_id, unit) DO UPDATE SET amount = projection_balances.amount + excluded.amount
                """
        case .setOwner(let original, let user, let product, let kind, let environment):
            return """
                INSERT INTO projection_entitlements (original_transaction_id, user_id, product_id, kind, environment)
                VALUES (\(original), \(user), \(product), \(kind.rawValue), \(environment))
                ON CONFLICT (original_transaction_id) DO UPDATE SET user_id = excluded.user_id
                """
        case .revokeOwnership(let original, let at):
            return """
                UPDATE projection_entitlements SET revoked_at_ms = least(coalesce(revoked_at_ms, \(at)), \(at))
                WHERE original_transaction_id = \(original)
                """
        case .mergeSubscriptionEntry(let original, let environment, let e):
            // Merging keeps what any sighting knew: dates once seen stay, flags once set stay,
            // so the order of sightings does not matter.
            return """
                INSERT INTO projection_subscription_entries
                    (original_transaction_id, transaction_id, product_id, environment, purchase_date_ms, expires_date_ms,
                     cancellation_date_ms, is_trial, is_upgraded)
                VALUES (\(original), \(e.transactionId), \(e.productId), \(environment), \(e.purchaseDateMs), \(e.expiresDateMs),
                        \(e.cancellationDateMs), \(e.isTrial), \(e.isUpgraded))
                ON CONFLICT (original_transaction_id, transaction_id) DO UPDATE SET
                    purchase_date_ms = coalesce(projection_subscription_entries.purchase_date_ms, excluded.purchase_date_ms),
                    expires_date_ms = greatest(projection_subscription_entries.expires_date_ms, excluded.expires_date_ms),
                    cancellation_date_ms = least(projection_subscription_entries.cancellation_date_ms, excluded.cancellation_date_ms),
                    is_trial = projection_subscription_entries.is_trial OR excluded.is_trial,
                    is_upgraded = projection_subscription_entries.is_upgraded OR excluded.is_upgraded
                """
        case .observeRenewal(let original, let r):
            // Newest observation wins; equal times are broken by the row's whole content (NULLs
            // made comparable), so the result does not depend on which was applied first.
            return """
                INSERT INTO projection_subscription_renewals
                    (original_transaction_id, observed_at_ms, auto_renew, auto_renew_product_id, in_billing_retry, grace_period_expires_ms)
                VALUES (\(original), \(r.observedAtMs), \(r.autoRenew), \(r.autoRenewProductId), \(r.inBillingRetry), \(r.gracePeriodExpiresMs))
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
                """
        case .changeOwner, .linkAppleAccount:
            preconditionFailure("statements(for:) writes these")
        case .setCatalogPrice, .addRevenueSale, .addRevenueRefund, .timelineEvent, .timelineLink:
            preconditionFailure("statements(for:) writes these")
        }
    }
}
