// The PurchaseLedgerCLI module; see ARCHITECTURE §2.
