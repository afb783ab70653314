import PurchaseLedgerCLI

await runCommandAndExit(DemoCommand.self)
