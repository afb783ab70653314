/// The charts of the finance-over-time pages as SVG drawn on the server, like `RevenueChart`:
/// no script, every text escaped, heights scaled in integers. Each point or bar is a link (`<a>`
/// inside the SVG) to the subscriptions behind it, so a figure is one click from its timelines.
enum HistoryCharts {
    /// One value of a series at one period, and where its subscriptions are listed.
    struct Point {
        var label: String
        var value: Int64
        /// How the value reads in a tooltip (money in major units, a count, a rate).
        var text: String
        var href: String
    }

    /// A stacked bar's parts: `up` above the axis, `down` below it, each with its class.
    struct Stack {
        var label: String
        var up: [(cssClass: String, point: Point)]
        var down: [(cssClass: String, point: Point)]
    }

    static let width = 960, height = 220, left = 70, top = 28, bottom = 28

    /// A line through each period's value, a dot per point linking to its subscriptions.
    static func line(_ points: [Point], title: String, cssClass: String, maxLabel: (Int64) -> String) -> String {
        let plot = height - top - bottom
        let maxValue = max(points.map(\.value).max() ?? 0, 1)
        // Each dot above where the stacked charts put that period's bar, so the charts line up.
        let step = points.isEmpty ? 0 : (width - left - 10) / points.count
        let middle = min(48, max(1, step * 7 / 10)) / 2
        func y(_ value: Int64) -> Int { top + plot - Int(Int64(plot) * max(value, 0) / maxValue) }
        var out = open(title)
        out += "<text x=\"8\" y=\"\(top + 10)\">\(escape(maxLabel(maxValue)))</text>"
        out += "<line x1=\"\(left)\" y1=\"\(top + plot)\" x2=\"\(width - 10)\" y2=\"\(top + plot)\" stroke=\"#5b6475\"/>"
        let coordinates = points.enumerated().map { (left + $0.offset * step + middle, y($0.element.value)) }
        if coordinates.count > 1 {
            out += "<polyline class=\"\(cssClass)\" fill=\"none\" points=\"" + coordinates.map { "\($0.0),\($0.1)" }.joined(separator: " ") + "\"/>"
        }
        for (index, point) in points.enumerated() {
            let (x, yy) = coordinates[index]
            out += "<a href=\"\(escape(point.href))\"><circle class=\"\(cssClass)\" cx=\"\(x)\" cy=\"\(yy)\" r=\"4\">"
            out += "<title>\(escape("\(point.label): \(point.text)"))</title></circle></a>"
            out += label(point.label, x: x - middle, index: index, count: points.count)
        }
        if points.isEmpty { out += "<text x=\"\(left)\" y=\"\(top + plot / 2)\">no periods</text>" }
        return out + "</svg>"
    }

    /// Bars stacked above and below an axis: movement (new, expansion, reactivation up;
    /// contraction and churn down), or any two-sided series.
    static func stacked(_ stacks: [Stack], title: String, maxLabel: (Int64) -> String) -> String {
        let plot = height - top - bottom
        let maxUp = stacks.map { $0.up.map(\.point.value).reduce(0, +) }.max() ?? 0
        let maxDown = stacks.map { $0.down.map(\.point.value).reduce(0, +) }.max() ?? 0
        let scale = max(maxUp + maxDown, 1)
        let zero = top + Int(Int64(plot) * maxUp / scale)
        let step = stacks.isEmpty ? 0 : (width - left - 10) / stacks.count
        let bar = min(48, max(1, step * 7 / 10))
        var out = open(title)
        out += "<text x=\"8\" y=\"\(top + 10)\">\(escape(maxLabel(max(maxUp, maxDown))))</text>"
        out += "<line x1=\"\(left)\" y1=\"\(zero)\" x2=\"\(width - 10)\" y2=\"\(zero)\" stroke=\"#5b6475\"/>"
        for (index, stack) in stacks.enumerated() {
            let x = left + index * step
            var above = zero, below = zero
            for part in stack.up where part.point.value > 0 {
                let h = max(1, Int(Int64(plot) * part.point.value / scale))
                above -= h
                out += rect(part.cssClass, x: x, y: above, width: bar, height: h, part.point)
            }
            for part in stack.down where part.point.value > 0 {
                let h = max(1, Int(Int64(plot) * part.point.value / scale))
                out += rect(part.cssClass, x: x, y: below, width: bar, height: h, part.point)
                below += h
            }
            out += label(stack.label, x: x, index: index, count: stacks.count)
        }
        if stacks.isEmpty { out += "<text x=\"\(left)\" y=\"\(zero - 8)\">no periods</text>" }
        return out + "</svg>"
    }

    private static func open(_ title: String) -> String {
        "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" aria-label=\"\(escape(title))\">"
            + "<text x=\"8\" y=\"16\">\(escape(title))</text>"
    }

    private static func rect(_ cssClass: String, x: Int, y: Int, width: Int, height: Int, _ point: Point) -> String {
        "<a href=\"\(escape(point.href))\"><rect class=\"\(cssClass)\" x=\"\(x)\" y=\"\(y)\" width=\"\(width)\" height=\"\(height)\">"
            + "<title>\(escape("\(point.label): \(point.text)"))</title></rect></a>"
    }

    /// A period's label under its bar or dot, every few so they never overlap.
    private static func label(_ text: String, x: Int, index: Int, count: Int) -> String {
        guard index % max(1, count / 8) == 0 else { return "" }
        return "<text x=\"\(x)\" y=\"\(height - 8)\">\(escape(text))</text>"
    }

    static func escape(_ text: String) -> String { ConsoleHTML.escape(text) }
}
