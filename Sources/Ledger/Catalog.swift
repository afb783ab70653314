import AppStore
import Foundation
import Primitives

/// One product the app sells, as the catalog file describes it (docs/configuration.md, "The catalog file").
public struct Product: Sendable, Hashable, Codable {
    public var productId: String
    public var kind: ProductKind
    /// What one unit delivers, per grant unit (`{"coins": 100}`); empty for most owned products.
    public var grants: [String: Int64]
    /// The reference price of one unit in minor units of `currency`, used for revenue when
    /// Apple's answer carries no price.
    public var priceMinor: Int64?
    public var currency: String?
    /// App Store Connect's SKU and Apple ID for the product (optional): what its reports name
    /// products by, so they can be joined to the ledger's product ids.
    public var sku: String?
    public var appleId: String?

    public init(
        productId: String, kind: ProductKind, grants: [String: Int64] = [:], priceMinor: Int64? = nil, currency: String? = nil,
        sku: String? = nil, appleId: String? = nil
    ) {
        self.productId = productId
        self.kind = kind
        self.grants = grants
        self.priceMinor = priceMinor
        self.currency = currency
        self.sku = sku
        self.appleId = appleId
    }

    enum CodingKeys: String, CodingKey { case productId, kind, grants, priceMinor, currency, sku, appleId }

    /// `grants` may be left out (owned products usually grant nothing countable).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            productId: try c.decode(String.self, forKey: .productId), kind: try c.decode(ProductKind.self, forKey: .kind),
            grants: try c.decodeIfPresent([String: Int64].self, forKey: .grants) ?? [:],
            priceMinor: try c.decodeIfPresent(Int64.self, forKey: .priceMinor), currency: try c.decodeIfPresent(String.self, forKey: .currency),
            sku: try c.decodeIfPresent(String.self, forKey: .sku), appleId: try Self.decodeAppleId(c))
    }

    /// App Store Connect shows the Apple ID as a number; a catalog may write it either way.
    private static func decodeAppleId(_ c: KeyedDecodingContainer<CodingKeys>) throws -> String? {
        if let number = try? c.decodeIfPresent(Int64.self, forKey: .appleId) { return String(number) }
        return try c.decodeIfPresent(String.self, forKey: .appleId)
    }
}

/// The products the ledger knows, by `product_id`. Loading one appends `CatalogLoaded`, so the
/// catalog in force at any position is a fold of the events before it.
public struct Catalog: Sendable, Hashable {
    public private(set) var products: [String: Product]

    public init(products: [Product] = []) {
        self.products = Dictionary(products.map { ($0.productId, $0) }, uniquingKeysWith: { _, last in last })
    }

    public subscript(productId: String) -> Product? { products[productId] }

    /// Applies a newer catalog: products it names are replaced, others are kept (a product
    /// removed from sale still has purchases to explain).
    public mutating func merge(_ loaded: CatalogLoaded) {
        for product in loaded.products { products[product.productId] = product }
    }

    /// Parses a catalog file: `{"products": [{"product_id", "kind", "grants"?, "price_minor"?,
    /// "currency"?}]}`. Errors name the product and field, never guess.
    public static func parse(_ data: Data) throws(CatalogError) -> [Product] {
        struct File: Decodable { var products: [Product] }
        let file: File
        do {
            file = try LedgerJSON.decoder.decode(File.self, from: data)
        } catch {
            throw CatalogError("the catalog is not {\"products\": [...]} with product_id and a known kind: \(LedgerJSON.describe(error))")
        }
        var seen = Set<String>()
        for product in file.products {
            guard !product.productId.isEmpty else { throw CatalogError("a product has an empty product_id") }
            guard seen.insert(product.productId).inserted else { throw CatalogError("product \(product.productId) is listed twice") }
            if let price = product.priceMinor, price < 0 { throw CatalogError("product \(product.productId) has a negative price_minor") }
            if product.priceMinor != nil, product.currency == nil {
                throw CatalogError("product \(product.productId) has a price_minor but no currency")
            }
            if let currency = product.currency, !ISO4217.isCode(currency) {
                throw CatalogError("product \(product.productId) has a currency that is not an ISO 4217 code")
            }
            for (name, value) in [("sku", product.sku), ("apple_id", product.appleId)] where value?.isEmpty == true {
                throw CatalogError("product \(product.productId) has an empty \(name)")
            }
            for (unit, amount) in product.grants where unit.isEmpty || amount <= 0 {
                throw CatalogError("product \(product.productId) grants \(amount) of \"\(unit)\": grants are positive amounts of a named unit")
            }
        }
        return file.products
    }
}

/// A catalog file that cannot be used, with a message fit for the operator.
public struct CatalogError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Every app's catalog, folded from the `catalog` stream in order: each `CatalogLoaded` merges
/// into the catalog of the app it names, so the same product id in two apps is two products
/// (docs/several-apps.md). A load recorded before catalogs named their app belongs to the log's
/// legacy app; while the log names none yet (no `serve` of this release has run on it), to
/// whichever app is asked about that has no catalog of its own.
public struct AppCatalogs: Sendable, Hashable {
    public private(set) var byApp: [String: Catalog] = [:]
    public let legacyApp: String?
    /// Whether a load named no app.
    public private(set) var holdsUnnamed = false

    public init(legacyApp: String?) {
        self.legacyApp = legacyApp
    }

    public mutating func merge(_ loaded: CatalogLoaded) {
        if loaded.bundleId == nil { holdsUnnamed = true }
        byApp[loaded.bundleId ?? legacyApp ?? "", default: Catalog()].merge(loaded)
    }

    /// The catalog of `bundleId`; empty when none was loaded for it.
    public subscript(bundleId: String) -> Catalog {
        byApp[bundleId] ?? (legacyApp == nil ? byApp[""] : nil) ?? Catalog()
    }
}
