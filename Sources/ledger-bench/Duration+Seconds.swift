extension Duration {
    /// In seconds, for rates and latencies.
    var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
