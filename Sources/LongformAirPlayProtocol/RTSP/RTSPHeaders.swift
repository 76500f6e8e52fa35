/// RTSP headers in the order they were added; names compare without case, as RTSP says.
public struct RTSPHeaders: Sendable, Equatable, Sequence {
    private var fields: [(name: String, value: String)] = []

    /// No headers.
    public init() {}

    /// `fields`, in order.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name`, or nil; setting replaces every value of it (nil removes them).
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.isEqualIgnoringCase(name) }?.value }
        set {
            fields.removeAll { $0.name.isEqualIgnoringCase(name) }
            if let newValue { fields.append((name: name, value: newValue)) }
        }
    }

    /// Adds `value` under `name`, after the others.
    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// The fields, in order.
    public func makeIterator() -> some IteratorProtocol<(name: String, value: String)> { fields.makeIterator() }

    /// Whether both hold the same fields in the same order.
    public static func == (lhs: RTSPHeaders, rhs: RTSPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

extension String {
    /// Whether the two are equal, ignoring case (RTSP header names).
    func isEqualIgnoringCase(_ other: String) -> Bool { lowercased() == other.lowercased() }
}
