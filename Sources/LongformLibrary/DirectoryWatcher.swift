import Foundation
import Logging
import LongformCore
#if canImport(Glibc)
import Glibc
#endif

/// Tells when files under some directories are created, written, moved or deleted, through Linux's
/// inotify. Changes are gathered until the directories have been quiet for `quietInterval`, then
/// reported once, so that copying an album is one rescan and not one per file.
final class DirectoryWatcher: @unchecked Sendable {
    private let directories: [String]
    private let quietInterval: Double
    private let onChange: @Sendable () -> Void
    private let logger = Logger(label: LogLabel.library)
    private let descriptor: Int32
    /// A pipe whose write end `stop()` writes to: the watcher sleeps in `poll` without a timeout
    /// while nothing is pending, and this wakes it.
    private let stopPipe: (read: Int32, write: Int32)
    private let isStopped = NSLock()
    private var stopRequested = false
    private var thread: Thread?

    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF)

    /// A watcher; nil (with a log line) when inotify is unavailable. Call `start()` once.
    init?(directories: [String], quietInterval: Double = 0.5, onChange: @escaping @Sendable () -> Void) {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if descriptor < 0 {
            Logger(label: LogLabel.library).warning("library: cannot watch for changes: inotify_init1: \(String(cString: strerror(errno)))")
            return nil
        }
        var ends: [Int32] = [0, 0]
        if pipe(&ends) != 0 {
            Logger(label: LogLabel.library).warning("library: cannot watch for changes: pipe: \(String(cString: strerror(errno)))")
            close(descriptor)
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        self.stopPipe = (ends[0], ends[1])
        self.descriptor = descriptor
        self.directories = directories
        self.quietInterval = quietInterval
        self.onChange = onChange
    }

    /// Starts watching on a thread of its own.
    func start() {
        addWatches()
        let thread = Thread { [self] in run() }
        thread.name = "longform.library.watch"
        self.thread = thread
        thread.start()
    }

    /// Stops watching; the thread wakes at once and ends (closing its descriptors).
    func stop() {
        isStopped.lock()
        defer { isStopped.unlock() }
        guard !stopRequested else { return }
        stopRequested = true
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
    }

    private var shouldStop: Bool {
        isStopped.lock()
        defer { isStopped.unlock() }
        return stopRequested
    }

    /// Watches every directory under the roots (again: a directory that already has a watch keeps it).
    private func addWatches() {
        for root in directories {
            watch(root)
            guard let enumerator = FileManager.default.enumerator(atPath: root) else { continue }
            while let relative = enumerator.nextObject() as? String {
                let full = (root as NSString).appendingPathComponent(relative)
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), isDirectory.boolValue { watch(full) }
            }
        }
    }

    private func watch(_ directory: String) {
        if inotify_add_watch(descriptor, directory, Self.mask) < 0 {
            logger.warning("library: cannot watch \(directory): \(String(cString: strerror(errno)))")
        }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var pendingSince: Double?
        while !shouldStop {
            var pollers = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            // Asleep until something changes; once something has, until the quiet interval is over.
            let timeout = pendingSince.map { since in Int32(max(0, (since + quietInterval - Double(HostClock.now()) / 1e9) * 1000).rounded(.up)) } ?? -1
            let ready = poll(&pollers, 2, timeout)
            if ready > 0 && pollers[0].revents != 0 {
                // The events' content does not matter: any change means a rescan.
                while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
                pendingSince = Double(HostClock.now()) / 1e9
                // A new directory needs its own watch before files land in it.
                addWatches()
            } else if let since = pendingSince, Double(HostClock.now()) / 1e9 - since >= quietInterval {
                pendingSince = nil
                onChange()
            }
        }
        // The thread owns the descriptors from `start()` on: closed here, once it no longer reads them.
        close(descriptor)
        close(stopPipe.read)
        close(stopPipe.write)
    }
}
