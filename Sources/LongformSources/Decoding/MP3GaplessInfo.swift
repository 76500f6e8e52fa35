import Foundation

/// The gapless fields of an MP3's Xing/Info frame and its LAME tag: the frame count, the encoder
/// delay and the padding. FFmpeg trims by them while decoding but does not expose them, and the
/// item's exact length is needed before decoding (for its duration).
public struct MP3GaplessInfo: Equatable, Sendable {
    /// MPEG audio frames after the Xing frame.
    public var frameCount: Int
    /// Samples per frame (1152 for MPEG-1 layer III, 576 for MPEG-2/2.5).
    public var samplesPerFrame: Int
    /// Encoder delay at the start, in samples.
    public var delay: Int
    /// Padding at the end, in samples.
    public var padding: Int

    /// Samples the encoder was given.
    var validFrameCount: Int64 { Int64(frameCount * samplesPerFrame - delay - padding) }

    /// Reads the tag from the start of a local MP3 file; nil when it has none.
    static func read(path: String) -> MP3GaplessInfo? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 10), head.count == 10 else { return nil }
        var skip = 0
        if head.starts(with: Array("ID3".utf8)) {
            // A synch-safe size: 7 bits per byte.
            skip = 10 + (Int(head[6]) << 21 | Int(head[7]) << 14 | Int(head[8]) << 7 | Int(head[9]))
        }
        try? handle.seek(toOffset: UInt64(skip))
        guard let data = try? handle.read(upToCount: 4096) else { return nil }
        return parse([UInt8](data))
    }

    /// Parses the first MPEG frame in `bytes` for a Xing/Info header with a LAME tag.
    public static func parse(_ bytes: [UInt8]) -> MP3GaplessInfo? {
        guard let start = bytes.indices.dropLast(4).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] & 0xE0 == 0xE0 }) else { return nil }
        let versionBits = (bytes[start + 1] >> 3) & 0x03 // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        let layerBits = (bytes[start + 1] >> 1) & 0x03   // 1: layer III
        guard layerBits == 1, versionBits != 1 else { return nil }
        let isMPEG1 = versionBits == 3
        let isMono = (bytes[start + 3] >> 6) == 3
        // The Xing header follows the side information.
        let sideInformation = isMPEG1 ? (isMono ? 17 : 32) : (isMono ? 9 : 17)
        let xing = start + 4 + sideInformation
        guard xing + 8 <= bytes.count else { return nil }
        let tag = String(decoding: bytes[xing..<(xing + 4)], as: UTF8.self)
        guard tag == "Xing" || tag == "Info" else { return nil }
        func u32(_ offset: Int) -> Int { Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]) }
        let flags = u32(xing + 4)
        var cursor = xing + 8
        guard flags & 0x1 != 0, cursor + 4 <= bytes.count else { return nil }
        let frames = u32(cursor)
        cursor += 4
        if flags & 0x2 != 0 { cursor += 4 }   // byte count
        if flags & 0x4 != 0 { cursor += 100 } // table of contents
        if flags & 0x8 != 0 { cursor += 4 }   // quality
        // LAME tag: 9 bytes of encoder name, then 12 more bytes, then delay and padding in 3 bytes.
        let delayOffset = cursor + 21
        guard delayOffset + 3 <= bytes.count else { return nil }
        let encoder = String(decoding: bytes[cursor..<(cursor + 4)], as: UTF8.self)
        guard encoder == "LAME" || encoder == "Lavc" || encoder == "Lavf" else { return nil }
        let delay = Int(bytes[delayOffset]) << 4 | Int(bytes[delayOffset + 1]) >> 4
        let padding = Int(bytes[delayOffset + 1] & 0x0F) << 8 | Int(bytes[delayOffset + 2])
        let samplesPerFrame = isMPEG1 ? 1152 : 576
        guard frames > 0, frames * samplesPerFrame > delay + padding else { return nil }
        return MP3GaplessInfo(frameCount: frames, samplesPerFrame: samplesPerFrame, delay: delay, padding: padding)
    }
}
