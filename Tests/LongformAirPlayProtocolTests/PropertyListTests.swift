import Foundation
import LongformAirPlayProtocol
import LongformTestSupport
import Testing

/// Binary property lists against an independent implementation, Python's `plistlib`: what it
/// writes we read as the values it was given, what we write it reads back unchanged; and hostile
/// bytes refused with an error naming the object, never a trap.
@Suite("Binary property lists")
struct PropertyListTests {
    /// The values both sides know, by name: Python's literal, and ours.
    static let cases: [(name: String, python: String, value: PropertyList)] = [
        ("booleans", "[True, False]", [true, false]),
        ("integers of every width", "[0, 15, 255, 256, 65535, 65536, 2**32 - 1, 2**32, -1, -2**63, 2**63 - 1, 2**64 - 1]",
         .array([0, 15, 255, 256, 65535, 65536, 4_294_967_295, 4_294_967_296, -1, .integer(Int128(Int64.min)), .integer(Int128(Int64.max)),
                 .integer(Int128(UInt64.max))])),
        ("reals", "[1.5, -0.25, 1e300]", [1.5, -0.25, 1e300]),
        ("a date", "datetime.datetime(2026, 12, 5, 19, 30, 15)", .date(secondsSince2001: 818_191_815)),
        ("data, short and long", "[b'', bytes(range(14)), bytes(range(256)) * 300]",
         .array([.data([]), .data(Array(0..<14)), .data(Array(repeating: Array(0...255), count: 300).flatMap { $0 })])),
        ("strings: ASCII, long, and beyond Latin", "['', 'Kitchen', 'a' * 40, 'Küche ♫', 'Room 🎵']",
         ["", "Kitchen", .string(String(repeating: "a", count: 40)), "Küche ♫", "Room 🎵"]),
        ("a SETUP's streams", "{'streams': [{'type': 103, 'ct': 2, 'spf': 352, 'shk': bytes(range(32)), 'audioFormat': 0x40000}], 'timingProtocol': 'PTP', 'isMultiSelectAirPlay': True}",
         ["streams": [["type": 103, "ct": 2, "spf": 352, "shk": .data(Array(0..<32)), "audioFormat": 262_144]], "timingProtocol": "PTP",
          "isMultiSelectAirPlay": true]),
        ("a SETRATEANCHORTIME with a 64-bit fraction", "{'networkTimeSecs': 1733426000, 'networkTimeFrac': 2**64 - 2**60, 'networkTimeTimelineID': 0x0123456789ABCDEF, 'rtpTime': 352000, 'rate': 1}",
         ["networkTimeSecs": 1_733_426_000, "networkTimeFrac": .integer(Int128(UInt64.max - (1 << 60) + 1)), "networkTimeTimelineID": 0x0123_4567_89AB_CDEF,
          "rtpTime": 352_000, "rate": 1]),
        ("more than 255 objects (two-byte references)", "list(range(1000))", .array((0..<1000).map { .integer(Int128($0)) })),
        ("empty containers, nested", "{'a': [], 'b': {}, 'c': [[[]]]}", ["a": [], "b": [:], "c": [[[]]]]),
    ]

    /// Prints, for each Python literal on its own line in argv, the hex of `plistlib`'s binary plist of it.
    static let pythonWriter = """
    import datetime, plistlib, sys
    for literal in sys.argv[1:]:
        print(plistlib.dumps(eval(literal), fmt=plistlib.FMT_BINARY, sort_keys=True).hex())
    """
    /// Reads each hex binary plist on a line of the file argv[1] names (one may be longer than an
    /// argument may be) with `plistlib` and prints it written again by `plistlib`.
    static let pythonRewriter = """
    import plistlib, sys
    for text in open(sys.argv[1]).read().split():
        print(plistlib.dumps(plistlib.loads(bytes.fromhex(text)), fmt=plistlib.FMT_BINARY).hex())
    """

    static func python(_ script: String, _ arguments: [String]) throws -> [[UInt8]] {
        try ExternalTool.check("python3", ["-c", script] + arguments).output.split(separator: "\n").map { hexBytes($0) }
    }

    static func hexBytes(_ text: some StringProtocol) -> [UInt8] {
        var bytes: [UInt8] = [], characters = Array(text.utf8)
        while characters.count >= 2 {
            bytes.append(UInt8(String(decoding: characters.prefix(2), as: UTF8.self), radix: 16)!)
            characters.removeFirst(2)
        }
        return bytes
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("what plistlib writes is read as the values it was given")
    func readsPlistlib() throws {
        let written = try Self.python(Self.pythonWriter, Self.cases.map(\.python))
        try #require(written.count == Self.cases.count)
        for (testCase, bytes) in zip(Self.cases, written) {
            #expect(try PropertyList(binary: bytes) == testCase.value, "\(testCase.name)")
        }
    }

    @Test("what we write plistlib reads as the same values")
    func plistlibReadsOurs() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("longform-plists-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try Self.cases.map { Self.hex($0.value.binaryEncoded()) }.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let rewritten = try Self.python(Self.pythonRewriter, [file.path])
        try #require(rewritten.count == Self.cases.count)
        for (testCase, bytes) in zip(Self.cases, rewritten) {
            #expect(try PropertyList(binary: bytes) == testCase.value, "\(testCase.name)")
        }
    }

    @Test("a small dictionary is written byte for byte as plistlib writes it")
    func smallDictionaryBytes() throws {
        let ours = (["a": 1, "b": "ü"] as PropertyList).binaryEncoded()
        let theirs = try Self.python(Self.pythonWriter, ["{'a': 1, 'b': 'ü'}"])
        #expect(ours == theirs.first)
        // Worked by hand: a dictionary of two (keys 1, 2; values 3, 4), "a", "b", 1, "ü" in UTF-16, the offsets, the trailer.
        #expect(Array(ours.dropFirst(8).prefix(16)) == [0xD2, 1, 2, 3, 4, 0x51, 0x61, 0x51, 0x62, 0x10, 0x01, 0x61, 0x00, 0xFC, 0x08, 0x0D])
    }

    @Test("hostile bytes are refused with the culprit named, and every truncation too")
    func hostileBytes() throws {
        func refusal(_ bytes: [UInt8]) -> String? {
            do { _ = try PropertyList(binary: bytes); return nil } catch { return error.description }
        }
        #expect(refusal(Array("not a plist at all, not one bit of it".utf8))?.contains("not a binary property list") == true)
        let valid = (["streams": [["type": 103, "shk": .data(Array(0..<32))]], "name": "Kitchen"] as PropertyList).binaryEncoded()
        for length in 0..<valid.count {
            #expect(refusal(Array(valid.prefix(length))) != nil, "the first \(length) of \(valid.count) bytes")
        }

        /// A plist of `objects` (their bytes), the first on top, with one-byte offsets and references.
        func handMade(_ objects: [[UInt8]]) -> [UInt8] {
            var bytes = Array("bplist00".utf8), offsets: [UInt8] = []
            for object in objects {
                offsets.append(UInt8(bytes.count))
                bytes += object
            }
            let table = bytes.count
            bytes += offsets + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)] + [UInt8](repeating: 0, count: 8)
                + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
            return bytes
        }
        #expect(try PropertyList(binary: handMade([[0xA1, 1], [0x10, 7]])) == [7])
        #expect(refusal(handMade([[0xA1, 0]]))?.contains("object 0 at 8 contains itself") == true)
        #expect(refusal(handMade([[0xA1, 1], [0xA1, 0]]))?.contains("contains itself") == true)
        #expect(refusal(handMade([[0xA2, 1, 1], [0xA0]]))?.contains("object 1 at 11: a container referred to twice") == true)
        #expect(try PropertyList(binary: handMade([[0xA2, 1, 1], [0x10, 7]])) == [7, 7], "a number may be shared")
        #expect(refusal(handMade([[0xA1, 9], [0x10, 7]]))?.contains("refers to object 9 of 2") == true)
        #expect(refusal(handMade([[0xAF, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]))?.contains("entries, more than") == true)
        #expect(refusal(handMade([[0xAF, 0x10, 0x05, 1]]))?.contains("runs past the end") == true)
        #expect(refusal(handMade([[0xD1, 1, 1], [0x10, 7]]))?.contains("key 0 is not a string") == true)
        #expect(refusal(handMade([[0x81, 0]]))?.contains("a UID") == true)
        #expect(refusal(handMade([[0x71]]))?.contains("unknown marker 0x71") == true)
        #expect(refusal(handMade([[0x62, 0xD8, 0x00, 0x00, 0x41]]))?.contains("not valid UTF-16") == true)

        var deep: PropertyList = []
        for _ in 1..<PropertyList.maximumDepth { deep = [deep] }
        #expect(try PropertyList(binary: deep.binaryEncoded()) == deep, "\(PropertyList.maximumDepth) levels are read")
        #expect(refusal(([deep] as PropertyList).binaryEncoded())?.contains("nested more than \(PropertyList.maximumDepth) deep") == true)
    }
}
