/// A binary min-heap of (due time, original transaction id): which subscription falls due
/// next while the clock advances, in O(log n) per renewal instead of a scan of all of them.
///
/// Ties break on the id, so the order of renewals, and with it the ids they get, is fixed.
struct DueQueue {
    private var heap: [(due: Int64, id: String)] = []

    init(_ entries: some Sequence<(Int64, String)>) {
        for (due, id) in entries { push(due, id) }
    }

    var first: (due: Int64, id: String)? { heap.first }

    mutating func push(_ due: Int64, _ id: String) {
        heap.append((due, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popFirst() -> (due: Int64, id: String)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, Self.less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.less(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }

    private static func less(_ a: (due: Int64, id: String), _ b: (due: Int64, id: String)) -> Bool {
        a.due != b.due ? a.due < b.due : a.id < b.id
    }
}
