#if canImport(Glibc)
import Glibc
#endif

/// How the C allocator is told to treat the engine's sample buffers.
///
/// Playback allocates and frees a buffer of about a second (350 KB of Float32 stereo) several
/// times a second. glibc maps blocks that large afresh from the system and unmaps them when freed,
/// so every new buffer's pages fault in and are zeroed again: a tenth of the CPU a player uses.
/// With buffers up to 4 MiB taken from the heap, and up to 16 MiB of freed heap kept, a freed
/// buffer's memory is reused as it is. The cost is at most those 16 MiB held after a flush.
public enum AllocatorTuning {
    /// Blocks up to this size come from the heap, not from a mapping of their own.
    public static let heapBlockLimit: Int32 = 4 << 20
    /// Freed heap memory up to this much is kept for reuse rather than given back.
    public static let keptFreeMemory: Int32 = 16 << 20

    /// Applies the settings to this process; call once, before the engine starts.
    public static func keepSampleBuffersMapped() {
        #if canImport(Glibc)
        // <malloc.h> is not in Swift's Glibc module: mallopt is looked up, and its parameters are
        // glibc's fixed values (M_TRIM_THRESHOLD −1, M_MMAP_THRESHOLD −3).
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(-3, heapBlockLimit)
        _ = mallopt(-1, keptFreeMemory)
        #endif
    }
}
