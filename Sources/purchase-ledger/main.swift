import PurchaseLedgerCLI

await PurchaseLedgerCommand.runAndExit()
