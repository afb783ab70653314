import Testing

@testable import Ledger

/// Every app has its catalog: the same product id in two apps is two products
/// (docs/several-apps.md), and a catalog loaded before catalogs named their app is the legacy app's.
@Suite struct AppCatalogsTests {
    static func loaded(_ grants: Int64, app: String?) -> CatalogLoaded {
        CatalogLoaded(
            products: [Product(productId: Given.coins, kind: .consumable, grants: ["coins": grants])], fileSha256: "f\(grants)", bundleId: app)
    }

    @Test("the same product id in two apps is two products, each load merging into its own app's")
    func sameProductIdInTwoApps() {
        var catalogs = AppCatalogs(legacyApp: nil)
        catalogs.merge(Self.loaded(100, app: "com.acme.game"))
        catalogs.merge(Self.loaded(300, app: "com.acme.puzzle"))
        #expect(catalogs["com.acme.game"][Given.coins]?.grants == ["coins": 100])
        #expect(catalogs["com.acme.puzzle"][Given.coins]?.grants == ["coins": 300])
        #expect(catalogs["com.acme.other"][Given.coins] == nil, "an app with no catalog sells nothing")
        #expect(!catalogs.holdsUnnamed)
    }

    @Test("a load naming no app is the legacy app's, and a later load for that app replaces its products")
    func unnamedLoadsAreTheLegacyApps() {
        var catalogs = AppCatalogs(legacyApp: "com.acme.game")
        catalogs.merge(Self.loaded(100, app: nil))
        #expect(catalogs.holdsUnnamed)
        #expect(catalogs["com.acme.game"][Given.coins]?.grants == ["coins": 100])
        #expect(catalogs["com.acme.puzzle"][Given.coins] == nil)
        catalogs.merge(Self.loaded(150, app: "com.acme.game"))
        #expect(catalogs["com.acme.game"][Given.coins]?.grants == ["coins": 150])
    }

    @Test("while the log names no legacy app, a load naming none serves an app that has no catalog of its own")
    func unnamedLoadsBeforeTheLogNamesItsApp() {
        var catalogs = AppCatalogs(legacyApp: nil)
        catalogs.merge(Self.loaded(100, app: nil))
        #expect(catalogs["com.acme.game"][Given.coins]?.grants == ["coins": 100])
        catalogs.merge(Self.loaded(300, app: "com.acme.puzzle"))
        #expect(catalogs["com.acme.puzzle"][Given.coins]?.grants == ["coins": 300])
    }
}
