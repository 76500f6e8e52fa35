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

    /// Stops watching; the thread ends (and closes its inotify descriptor) within 0.2 s.
    func stop() {
        isStopped.lock()
        stopRequested = true
        isStopped.unlock()
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
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            if ready > 0 {
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
        // The thread owns the descriptor from `start()` on: closed here, once it no longer reads it.
        close(descriptor)
    }
}
