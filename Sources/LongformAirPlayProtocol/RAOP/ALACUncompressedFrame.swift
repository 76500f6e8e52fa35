/// One ALAC frame holding its samples uncompressed: what every ALAC decoder reads bit-exact, with
/// no encoder on the sender (1,411 kbit/s for 16-bit stereo at 44.1 kHz, a LAN's small change).
///
/// Layout (bits): element type 3 (1: a channel pair), element instance 4, unused 12, has-size 1
/// (0: the cookie's 352 frames), shift 2 (0), not-compressed 1 (1); then each frame's left and
/// right samples, 16 bits big-endian each; then the end element (7, 3 bits); zero padding to a byte.
public enum ALACUncompressedFrame {
    /// The frame's bytes for `frameCount` stereo frames of `samples` (interleaved, left first).
    /// A frame of fewer than the cookie's frames is sent padded with silence to it by the caller.
    public static func encode(_ samples: UnsafeBufferPointer<Int16>, frameCount: Int) -> [UInt8] {
        var writer = BitWriter(capacityBits: 23 + frameCount * 32 + 3)
        writer.write(1, bits: 3)
        writer.write(0, bits: 4)
        writer.write(0, bits: 12)
        writer.write(0, bits: 1)
        writer.write(0, bits: 2)
        writer.write(1, bits: 1)
        for index in 0..<(frameCount * 2) { writer.write(UInt32(UInt16(bitPattern: samples[index])), bits: 16) }
        writer.write(7, bits: 3)
        return writer.bytes
    }

    /// The byte count of a frame of `frameCount` stereo frames.
    public static func byteCount(frameCount: Int) -> Int { (23 + frameCount * 32 + 3 + 7) / 8 }
}

/// Writes bit fields most significant bit first.
struct BitWriter {
    private(set) var bytes: [UInt8]
    private var bitCount = 0

    init(capacityBits: Int) {
        bytes = []
        bytes.reserveCapacity((capacityBits + 7) / 8)
    }

    /// Appends the low `bits` bits of `value` (at most 32).
    mutating func write(_ value: UInt32, bits: Int) {
        var remaining = bits
        while remaining > 0 {
            let used = bitCount % 8
            if used == 0 { bytes.append(0) }
            let room = 8 - used
            let take = min(room, remaining)
            let chunk = UInt8(truncatingIfNeeded: (value >> UInt32(remaining - take)) & ((1 << UInt32(take)) - 1))
            bytes[bytes.count - 1] |= chunk << UInt8(room - take)
            remaining -= take
            bitCount += take
        }
    }
}
