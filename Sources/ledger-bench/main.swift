// Benchmarks print figures next to a ceiling measured in the same run; run through Tools/bench.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment

switch arguments.first {
case "store":
    guard let conninfo = environment["DATABASE_URL"] else {
        FileHandle.standardError.write(Data("ledger-bench store needs DATABASE_URL (run it through Tools/bench)\n".utf8))
        exit(2)
    }
    try await StoreBench.run(
        conninfo: conninfo,
        pgbench1: environment["BENCH_PGBENCH_1"].flatMap(Double.init),
        pgbench8: environment["BENCH_PGBENCH_8"].flatMap(Double.init),
        ours1: environment["BENCH_OURS_1"].flatMap(Double.init),
        ours8: environment["BENCH_OURS_8"].flatMap(Double.init),
        batch8: environment["BENCH_BATCH_8"].flatMap(Double.init),
        seconds: environment["BENCH_SECONDS"].flatMap(Double.init) ?? 10)
case "append-rate":
    // ledger-bench append-rate CALLERS SECONDS: one round of durable single-event appends, for
    // Tools/bench to interleave with pgbench rounds.
    guard arguments.count == 3, let callers = Int(arguments[1]), let seconds = Double(arguments[2]),
        let conninfo = environment["DATABASE_URL"]
    else {
        FileHandle.standardError.write(Data("usage: ledger-bench append-rate CALLERS SECONDS (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    try await StoreBench.appendRate(conninfo: conninfo, callers: callers, seconds: seconds)
case "read-profile":
    try await StoreBench.readProfile(conninfo: environment["DATABASE_URL"] ?? "")
case "flow":
    // ledger-bench flow CLIENTS SECONDS: one round of receipts through the HTTP server, for
    // Tools/bench to interleave with pgbench rounds.
    guard arguments.count == 3, let clients = Int(arguments[1]), let seconds = Double(arguments[2]),
        let conninfo = environment["DATABASE_URL"]
    else {
        FileHandle.standardError.write(Data("usage: ledger-bench flow CLIENTS SECONDS (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    print(try await FlowBench.run(conninfo: conninfo, clients: clients, seconds: seconds))
case "erase":
    // ledger-bench erase PEOPLE EVENTS: erasing people of about EVENTS events each (Tools/bench erase).
    guard arguments.count == 3, let people = Int(arguments[1]), let events = Int(arguments[2]), people > 0,
        let conninfo = environment["DATABASE_URL"]
    else {
        FileHandle.standardError.write(Data("usage: ledger-bench erase PEOPLE EVENTS (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    print(try await EraseBench.run(conninfo: conninfo, people: people, events: events))
case "reads":
    // ledger-bench reads CLIENTS SECONDS: a user's view read right after its own receipt while
    // CLIENTS submit receipts, beside the same read with nothing to wait for.
    guard arguments.count == 3, let clients = Int(arguments[1]), let seconds = Double(arguments[2]),
        let conninfo = environment["DATABASE_URL"]
    else {
        FileHandle.standardError.write(Data("usage: ledger-bench reads CLIENTS SECONDS (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    print(try await ReadBench.run(conninfo: conninfo, clients: clients, seconds: seconds))
case "reconcile":
    // ledger-bench reconcile NOTIFICATIONS: missed notifications recovered by one reconcile,
    // beside the same notifications posted directly.
    guard arguments.count == 2, let count = Int(arguments[1]), let conninfo = environment["DATABASE_URL"] else {
        FileHandle.standardError.write(Data("usage: ledger-bench reconcile NOTIFICATIONS (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    print(try await ReconcileBench.run(conninfo: conninfo, notifications: count))
case "unit":
    // ledger-bench unit BINARY CLIENTS SECONDS: `serve` of BINARY as the unit runs it (its own
    // process, NOTIFY_SOCKET): READY time, memory idle and at peak, the flow through it, stop time.
    guard arguments.count == 4, let clients = Int(arguments[2]), let seconds = Double(arguments[3]),
        let conninfo = environment["DATABASE_URL"]
    else {
        FileHandle.standardError.write(Data("usage: ledger-bench unit BINARY CLIENTS SECONDS (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    print(try await UnitBench.run(binary: arguments[1], conninfo: conninfo, clients: clients, seconds: seconds))
case "ready":
    // ledger-bench ready BINARY: milliseconds from spawn to READY=1 on DATABASE_URL as it is.
    guard arguments.count == 2, let conninfo = environment["DATABASE_URL"] else {
        FileHandle.standardError.write(Data("usage: ledger-bench ready BINARY (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    print(try await UnitBench.ready(binary: arguments[1], conninfo: conninfo))
case "flow-floor":
    // ledger-bench flow-floor CLIENTS SECONDS: the flow's HTTP parts alone, no database.
    guard arguments.count == 3, let clients = Int(arguments[1]), let seconds = Double(arguments[2]) else {
        FileHandle.standardError.write(Data("usage: ledger-bench flow-floor CLIENTS SECONDS\n".utf8))
        exit(2)
    }
    print(try await FlowFloorBench.run(clients: clients, seconds: seconds))
case "replay-grow":
    // ledger-bench replay-grow EVENTS: grows the demo-mix log to EVENTS events.
    guard arguments.count == 2, let events = Int64(arguments[1]), let conninfo = environment["DATABASE_URL"] else {
        FileHandle.standardError.write(Data("usage: ledger-bench replay-grow EVENTS (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    try await ReplayBench.grow(conninfo: conninfo, to: events)
case "price":
    // ledger-bench price EVENTS [REQUESTS]: price points read and applied, and the revenue
    // report before and after, on a log with countries grown to EVENTS.
    guard let conninfo = environment["DATABASE_URL"], let events = Int64(arguments.dropFirst().first ?? "") else {
        FileHandle.standardError.write(Data("usage: ledger-bench price EVENTS [REQUESTS] (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    try await ReplayBench.grow(conninfo: conninfo, to: events, countries: true)
    try await PriceBench.run(conninfo: conninfo, requests: Int(arguments.dropFirst(2).first ?? "") ?? 30)
case "webhooks":
    // ledger-bench webhooks EVENTS [SPENDS]: a log grown to EVENTS delivered to a receiver on
    // loopback, the lag of SPENDS spends, and GET /v1/events over the same messages.
    guard let conninfo = environment["DATABASE_URL"], let events = Int64(arguments.dropFirst().first ?? "") else {
        FileHandle.standardError.write(Data("usage: ledger-bench webhooks EVENTS [SPENDS] (with DATABASE_URL)\n".utf8))
        exit(2)
    }
    try await ReplayBench.grow(conninfo: conninfo, to: events)
    try await WebhookBench.run(conninfo: conninfo, spends: Int(arguments.dropFirst(2).first ?? "") ?? 2_000)
case "replay":
    guard let conninfo = environment["DATABASE_URL"] else { exit(2) }
    try await ReplayBench.run(
        conninfo: conninfo, rounds: Int(environment["BENCH_REPLAY_ROUNDS"] ?? "") ?? 3,
        pageSize: Int(environment["BENCH_REPLAY_PAGE"] ?? ""), swap: environment["BENCH_REPLAY_SWAP"] == "1",
        floor: environment["BENCH_REPLAY_FLOOR"] != "0")
case "revenue-reads":
    // ledger-bench revenue-reads [READS]: the revenue report by day and by app on the grown log.
    guard let conninfo = environment["DATABASE_URL"] else { exit(2) }
    print(try await RevenueBench.run(conninfo: conninfo, reads: Int(arguments.dropFirst().first ?? "") ?? 200))
case "dispute":
    guard let conninfo = environment["DATABASE_URL"] else { exit(2) }
    try await ReplayBench.dispute(conninfo: conninfo, reads: Int(arguments.dropFirst().first ?? "") ?? 2_000)
case "failover":
    // ledger-bench failover [BEFORE AFTER]: kill the primary of Tools/cluster mid-load.
    guard let conninfo = environment["DATABASE_URL"] else { exit(2) }
    try await FailoverBench.run(
        conninfo: conninfo, before: Double(arguments.dropFirst().first ?? "") ?? 5, after: Double(arguments.dropFirst(2).first ?? "") ?? 20)
case "partition":
    // ledger-bench partition: appends, verify, rebuild, disputes and sizes at the log's size.
    guard let conninfo = environment["DATABASE_URL"] else { exit(2) }
    try await PartitionBench.run(
        conninfo: conninfo, appendSeconds: Double(environment["BENCH_SECONDS"] ?? "") ?? 10,
        disputes: Int(environment["BENCH_DISPUTES"] ?? "") ?? 1_000)
case "history":
    // ledger-bench history [REQUESTS]: finance over time on the log replay-grow made.
    guard let conninfo = environment["DATABASE_URL"] else { exit(2) }
    try await HistoryBench.run(
        conninfo: conninfo, requests: Int(arguments.dropFirst().first ?? "") ?? 20, rounds: Int(environment["BENCH_HISTORY_ROUNDS"] ?? "") ?? 3)
case "console":
    // ledger-bench console [REQUESTS]: the console's pages on the log replay-grow made.
    guard let conninfo = environment["DATABASE_URL"] else { exit(2) }
    try await ConsoleBench.run(conninfo: conninfo, requests: Int(arguments.dropFirst().first ?? "") ?? 30)
case "apple":
    // Tools/bench runs from the repository's root, where the fixtures are.
    let fixture = environment["BENCH_FIXTURE"]
        ?? "Tests/Fixtures/apple/verifyreceipt-ios7-subscription-42-in_app-monthly-yearly-imdhemy.json"
    try AppleBench.run(fixture: URL(fileURLWithPath: fixture))
default:
    FileHandle.standardError.write(Data("usage: ledger-bench store|apple|flow|replay-grow|replay|dispute\n".utf8))
    exit(2)
}
