// Benchmarks print figures next to a ceiling measured in the same run; run through Tools/bench.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
default:
    FileHandle.standardError.write(Data("usage: ledger-bench store|apple\n".utf8))
    exit(2)
}
