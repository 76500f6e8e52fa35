/// Where two sample arrays differ, described in a line; nil when they are equal. Tests compare
/// audio with this rather than `#expect(a == b)`: a failing `==` on arrays of millions of samples
/// makes the test library compute a diff that does not finish.
public func mismatch<Sample: Equatable>(_ actual: some Collection<Sample>, _ expected: some Collection<Sample>) -> String? {
    var index = 0
    var actualIterator = actual.makeIterator(), expectedIterator = expected.makeIterator()
    while true {
        switch (actualIterator.next(), expectedIterator.next()) {
        case (nil, nil):
            return nil
        case (let a?, let e?):
            if a != e { return "sample \(index) is \(a), expected \(e) (\(actual.count) samples, expected \(expected.count))" }
        default:
            return "\(actual.count) samples, expected \(expected.count)"
        }
        index += 1
    }
}
