#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// `format` filled in by C's printf rules (`"%+.1f"`, `"%02x"`), for modules that leave
    /// Foundation out (its `String(format:)`).
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        self = Self.printed(format, arguments)
    }

    private static func printed(_ format: String, _ arguments: [any CVarArg]) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        var needed = Int(withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) })
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: needed + 1)
            needed = Int(withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) })
        }
        return String(decoding: buffer.prefix(Swift.max(needed, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
