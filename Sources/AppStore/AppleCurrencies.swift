/// How Apple writes amounts of a currency: the minor digits its prices and reports carry.
///
/// Apple prices the zero-decimal currencies it sells in (JPY, KRW, HUF, TWD…) in whole units,
/// even where ISO 4217 lists two minor digits (HUF, TWD): reports write "120", not "120.00".
/// Apple's reports are read by this table, and the ledger's `Money` counts minor units by it, so
/// a report and the ledger always agree on what a unit is.
public enum AppleCurrencies {
    /// 0 for the zero-decimal currencies Apple sells in, 2 otherwise.
    public static func minorDigits(of currency: String) -> Int {
        zeroDecimal.contains(currency.uppercased()) ? 0 : 2
    }

    static let zeroDecimal: Set<String> = ["JPY", "KRW", "CLP", "VND", "ISK", "HUF", "TWD", "UGX", "PYG", "XOF", "XAF"]
}
