/// A property list value, as AirPlay 2's RTSP bodies carry them (`application/x-apple-binary-plist`):
/// SETUP's streams, SETRATEANCHORTIME's anchor, FLUSHBUFFERED's range, the receiver's `/info`.
/// Dictionary keys are strings, as in every plist AirPlay sends; UIDs (NSKeyedArchiver's) are not
/// values here and are refused when read.
public enum PropertyList: Equatable, Sendable {
    /// `true` or `false`.
    case boolean(Bool)
    /// An integer; binary plists hold −2⁶³ through 2⁶⁴ − 1 (unsigned 64-bit values above Int64's
    /// range, such as a 64-bit binary fraction of a second, take 16 bytes on the wire).
    case integer(Int128)
    /// A floating-point number.
    case real(Double)
    /// A date, in seconds since 2001-01-01 00:00:00 UTC.
    case date(secondsSince2001: Double)
    /// Bytes.
    case data([UInt8])
    /// Text.
    case string(String)
    /// An ordered list.
    case array([PropertyList])
    /// Values by string key.
    case dictionary([String: PropertyList])

    /// The value under `key`, if this is a dictionary holding one.
    public subscript(key: String) -> PropertyList? {
        if case .dictionary(let entries) = self { entries[key] } else { nil }
    }

    /// The integer, if this is one that fits an `Int64`.
    public var int64Value: Int64? {
        if case .integer(let value) = self { Int64(exactly: value) } else { nil }
    }

    /// The integer, if this is one that fits a `UInt64`.
    public var uint64Value: UInt64? {
        if case .integer(let value) = self { UInt64(exactly: value) } else { nil }
    }

    /// The text, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The bytes, if this is data.
    public var dataValue: [UInt8]? {
        if case .data(let value) = self { value } else { nil }
    }

    /// The elements, if this is an array.
    public var arrayValue: [PropertyList]? {
        if case .array(let value) = self { value } else { nil }
    }
}

extension PropertyList: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `.boolean(value)`.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    /// `.integer(value)`.
    public init(integerLiteral value: Int64) { self = .integer(Int128(value)) }
    /// `.real(value)`.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// `.string(value)`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.array(elements)`.
    public init(arrayLiteral elements: PropertyList...) { self = .array(elements) }
    /// `.dictionary` of `elements`; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, PropertyList)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}
