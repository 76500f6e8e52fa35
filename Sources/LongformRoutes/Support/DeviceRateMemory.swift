#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Logging
import LongformCore
import Synchronization

/// Each device's rate as last measured, kept across runs: a file per device in a directory, as
/// ntpd's and chrony's drift files keep the system clock's, so that a route opened again starts
/// at its device's rate instead of the nominal one.
///
/// A rate is the device's frames per host-clock second over its nominal rate. A device's crystal
/// keeps its rate within a few ppm from one run to the next, while a route's own fit is trusted
/// only after seconds of reports: meanwhile a speaker placing its writes at the nominal rate, on a
/// device 41 ppm fast, drifted 41 µs a second from the rooms already playing. The rate is measured
/// against this process's host clock, so a skewed host clock (`HostClock.run(partsPerMillionFast:)`)
/// keys a device apart.
///
/// A file holds the rate in ppm on its first line and the device's key on its second; one that
/// is not so is named in the log and ignored. Writes go to a temporary file renamed over the old
/// one, so that a process killed meanwhile leaves the old rate or the new, never half of one.
public final class DeviceRateMemory: Sendable {
    /// The directory of the files, created when the first rate is remembered.
    public let directory: String
    /// The most a remembered rate may differ from 1 to be taken: a device clock is off by tens of ppm.
    public static let maximumDeviation = 0.001
    private let queue = DispatchQueue(label: "longform.device-rates")
    private let logger = Logger(label: LogLabel.route)
    /// Whether a write failed before: a directory that cannot be written is said once as a
    /// warning, then at debug level (a speaker writes up to six times a minute).
    private let hasFailedToWrite = Atomic<Bool>(false)

    /// A memory in `directory` (`StateDirectory`'s `device-rates`, for a program's own).
    public init(directory: String) {
        self.directory = directory
    }

    /// The memory in the `device-rates` folder of the state directory `stateDirectory`.
    public convenience init(stateDirectory: String) {
        self.init(directory: stateDirectory + "/device-rates")
    }

    /// The rate last remembered for `device`, or nil: none, or a file that does not hold one (logged).
    public func rate(ofDevice device: String) -> Double? {
        let key = Self.key(device)
        let path = filePath(key)
        guard let text = Self.read(path) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 2, let ppm = Double(lines[0]), abs(ppm) <= Self.maximumDeviation * 1e6 else {
            logger.warning("\(path): not a device's rate (a rate in ppm, then the device, a line each); ignored")
            return nil
        }
        // Another device whose key reads the same in a file's name.
        guard lines[1] == key else { return nil }
        return 1 + ppm / 1e6
    }

    /// Remembers `rate` for `device`, on a queue of the memory's own: the caller may be a route's
    /// thread, which must not wait on the disk. A rate off by more than `maximumDeviation` is not kept.
    public func remember(_ rate: Double, ofDevice device: String) {
        guard rate.isFinite, abs(rate - 1) <= Self.maximumDeviation else { return }
        let key = Self.key(device), path = filePath(key), directory = directory
        queue.async { [self] in
            let text = String(cFormat: "%+.3f", (rate - 1) * 1e6) + "\n" + key + "\n"
            guard let failure = Self.write(text, to: path, creating: directory) else { return }
            if hasFailedToWrite.exchange(true, ordering: .relaxed) {
                logger.debug("\(path): cannot remember the device's rate: \(failure)")
            } else {
                logger.warning("\(path): cannot remember the device's rate: \(failure); not kept (said once)")
            }
        }
    }

    /// Returns once every rate remembered so far is written.
    public func waitUntilWritten() {
        queue.sync {}
    }

    /// When a route's settled rate is worth writing: the first, then one that moved by
    /// `minimumChange`, at most every `minimumInterval`: a device that keeps its rate is written a
    /// few times a run, and a speaker killed (no stop to write at) loses at most 10 s of moves.
    public struct Schedule: Sendable {
        /// The smallest move of the rate worth writing again.
        public static let minimumChange = 0.5e-6
        /// The shortest time between two writes (ns).
        public static let minimumInterval: UInt64 = 10_000_000_000
        /// The rate last written and when.
        private var last: (rate: Double, hostTime: UInt64)?

        /// A schedule that has written nothing yet.
        public init() {}

        /// Whether `rate`, settled at `hostTime`, is to be written now (and so taken as written).
        public mutating func shouldRemember(_ rate: Double, at hostTime: UInt64) -> Bool {
            if let last, abs(rate - last.rate) < Self.minimumChange || hostTime < last.hostTime + Self.minimumInterval { return false }
            last = (rate, hostTime)
            return true
        }

        /// Whether `rate` differs from the one last written (at a route's stop, when it is written whatever the time).
        public func hasChanged(_ rate: Double) -> Bool {
            last.map { abs(rate - $0.rate) >= Self.minimumChange } ?? true
        }
    }

    /// The device's key with this process's clock skew, if any: rates against another clock differ.
    static func key(_ device: String) -> String {
        let skew = HostClock.partsPerMillionFast
        let plain = device.replacingNewlines()
        return skew == 0 ? plain : plain + String(cFormat: " (host clock %+.3f ppm fast)", skew)
    }

    /// The file of `key`: its letters and digits, every other character an underscore.
    private func filePath(_ key: String) -> String {
        let name = String(key.unicodeScalars.prefix(200).map { scalar -> Character in
            (scalar.isASCII && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "-"))
                ? Character(scalar) : "_"
        })
        return directory + "/" + name
    }

    /// The file's text, or nil if it cannot be read (as when there is none).
    private static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4_096)
        while bytes.count < 65_536 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to `path` through a temporary file beside it, creating `directory` (and its
    /// parents) if needed; the system's reason if it cannot.
    private static func write(_ text: String, to path: String, creating directory: String) -> String? {
        // From the root, or from the working directory for a relative one (as `--state state`).
        var parent = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            parent += "/" + component
            if mkdir(parent, 0o755) != 0 && errno != EEXIST { return systemFailure("create \(parent)") }
        }
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return systemFailure("create \(temporary)") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let reason = written == bytes.count ? nil : systemFailure("write \(temporary)")
        close(descriptor)
        if let reason {
            unlink(temporary)
            return reason
        }
        guard rename(temporary, path) == 0 else {
            let reason = systemFailure("rename \(temporary)")
            unlink(temporary)
            return reason
        }
        return nil
    }
}

private extension String {
    /// The text with each line break a space: a key is one line of its file.
    func replacingNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
