import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real AirPlay 1 (RAOP) receiver for the tests: Debian's shairport-sync 3.3.8 in a network
/// namespace of its own (`NetworkNamespace`), reached from this side at `address:port`, with a
/// dbus-daemon and an avahi-daemon of its own that advertise it (`_raop._tcp`) on the namespace's
/// link only. Needs root (CI runs as root); every process it started is killed when it is released.
///
/// One command runs it: `ip netns exec NS unshare --mount --pid --fork --kill-child --mount-proc
/// sh -c SCRIPT`. The private mount namespace has a tmpfs on /run, so that neither the bus's
/// socket (/run/dbus) nor avahi's (/run/avahi-daemon) is the host's; the PID namespace has `sh`,
/// then the shairport-sync it becomes (`exec`), as its init, so that killing that one process
/// kills every process of the receiver and leaves none to the host's init to reap.
public final class AirPlayReceiver: @unchecked Sendable {
    /// Where its audio goes.
    public enum Output: Sendable, Equatable {
        /// Raw PCM (16-bit little-endian, stereo, 44.1 kHz, interleaved) appended to `outputURL` by the `stdout` backend.
        case file
        /// A PulseAudio server's sink (`pa` backend), the server as `PulseAudioServer.start()` returns it; `outputURL` stays empty.
        case pulseAudio(server: String, sink: String)
    }

    /// The name it advertises (shairport's `name`; avahi shows it as `MACADDRESS@name`).
    public let name: String
    /// Its RTSP port, inside the namespace.
    public let port: Int
    /// The first of the UDP ports it takes for audio, control and timing (ten are its to take).
    public let udpPortBase = 6001
    /// Where its audio goes.
    public let output: Output
    /// The password it asks for (RTSP digest), if any.
    public let password: String?
    /// Whether it plays at full volume whatever the sender sets (else it attenuates and dithers: its samples are not the sender's).
    public let ignoresVolume: Bool
    /// The namespace it runs in (`cut()` and `restore()` its link).
    public let namespace: NetworkNamespace
    /// The raw PCM file (`Output.file`): what every start of it played, one after the other.
    public let outputURL: URL
    /// How far off its output may run before it corrects (seconds); nil: shairport-sync's default.
    public let driftTolerance: Double?
    /// Its directory: the configuration files, the output and the logs.
    public let directory: URL
    private let logURL: URL
    private let lock = NSLock()
    /// The running `ip netns exec … unshare …` (its PID is unshare's, outside the PID namespace),
    /// or nil once killed; changed only under `lock`.
    private var process: Process?
    /// How many times it was started; under `lock`.
    private var starts = 0
    /// The size of `outputURL`, in whole frames' bytes, at the last start; under `lock`.
    private var outputOffsetAtStart = 0
    /// The size of the log at the last start, where that start's lines begin; under `lock`.
    private var logOffsetAtStart = 0

    /// Whether this process may run one: root, and ip, unshare, shairport-sync, avahi-daemon, dbus-daemon and dbus-send.
    public static var isAvailable: Bool {
        NetworkNamespace.isAvailable && tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static let tools = ["/usr/bin/unshare", "/usr/bin/shairport-sync", "/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/dbus-send"]

    /// Makes its namespace, starts it as `name` on `port` and waits as `start()` does. With
    /// `driftTolerance` (seconds), its output corrects its timing once that far off (shairport-sync's
    /// default: 2 ms, within which its `pa` output drifts off PulseAudio's clock unchecked).
    public init(name: String, port: Int = 5000, output: Output = .file, password: String? = nil, ignoresVolume: Bool = false,
                driftTolerance: Double? = nil) throws {
        self.name = name
        self.driftTolerance = driftTolerance
        self.port = port
        self.output = output
        self.password = password
        self.ignoresVolume = ignoresVolume
        let namespace = try NetworkNamespace()
        self.namespace = namespace
        let directory = URL(fileURLWithPath: TestAudio.path("airplay-receiver-\(UUID().uuidString.prefix(8))"))
        self.directory = directory
        outputURL = directory.appendingPathComponent("output.raw")
        logURL = directory.appendingPathComponent("shairport-sync.log")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in [outputURL, logURL] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        // avahi answers on the veth only: the namespace's one link ("2: lfnTAG@if9: <…> …").
        let links = try ExternalTool.check("/usr/sbin/ip", ["-n", namespace.name, "-o", "link", "show", "type", "veth"]).output
        guard let field = links.split(separator: "\n").first?.split(separator: " ").dropFirst().first else {
            throw ExternalTool.Failure(description: "no veth in namespace \(namespace.name): \(links)")
        }
        let interface = String(field.prefix { $0 != "@" && $0 != ":" })
        try avahiConfiguration(interface: interface).write(to: directory.appendingPathComponent("avahi-daemon.conf"), atomically: true, encoding: .utf8)
        try shairportConfiguration().write(to: directory.appendingPathComponent("shairport-sync.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    deinit { stop() }

    /// The address to connect to from this side: the namespace's.
    public var address: String { namespace.address }

    /// `arguments` wrapped by nsenter into its mount, network and PID namespaces, so that the program
    /// sees this receiver's D-Bus and avahi-daemon (its /run), not the host's; throws if it is not running.
    public func command(_ arguments: [String]) throws -> [String] {
        ["/usr/bin/nsenter", "-t", String(try initPID()), "-m", "-n", "-p", "--"] + arguments
    }

    /// The path, from this side, of its system bus's socket (through its init's /proc root), for a
    /// D-Bus client of this process to reach its avahi-daemon; throws if it is not running.
    public func systemBusSocket() throws -> String {
        "/proc/\(try initPID())/root/run/dbus/system_bus_socket"
    }

    /// The PID, as this side sees it, of its PID namespace's init (sh, then shairport-sync).
    private func initPID() throws -> pid_t {
        lock.lock()
        defer { lock.unlock() }
        guard let process, process.isRunning, let pid = Self.children(of: process.processIdentifier).first else {
            throw ExternalTool.Failure(description: "AirPlayReceiver \"\(name)\" is not running")
        }
        return pid
    }

    /// Whether it is running (started, and neither killed, stopped nor ended by itself).
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return process?.isRunning ?? false
    }

    /// What shairport-sync logged (`-vv`) in every start so far, with what the start script said.
    public var logText: String { Self.text(of: logURL) }

    /// The service name avahi registered for this start (`MACADDRESS@name`), from the log; nil until then (a second or two).
    public var advertisedName: String? {
        lock.lock()
        let offset = logOffsetAtStart
        lock.unlock()
        let text = String(decoding: ((try? Data(contentsOf: logURL)) ?? Data()).dropFirst(offset), as: UTF8.self)
        // "avahi: service '33FA00A66F2E@Kitchen' successfully added."
        let prefix = "avahi: service '", suffix = "' successfully added."
        guard let line = text.split(separator: "\n").last(where: { $0.contains(prefix) && $0.hasSuffix(suffix) }),
              let nameStart = line.range(of: prefix)?.upperBound else { return nil }
        return String(line[nameStart...].dropLast(suffix.count))
    }

    /// Waits (up to `timeLimit` seconds) until avahi has registered this start's service, and returns its name.
    @discardableResult
    public func waitUntilAdvertised(timeLimit: TimeInterval = 10) throws -> String {
        let deadline = Date(timeIntervalSinceNow: timeLimit)
        while true {
            if let advertisedName { return advertisedName }
            guard Date() < deadline else {
                throw ExternalTool.Failure(description: "AirPlayReceiver \"\(name)\": avahi registered no service within \(Int(timeLimit)) s\n\(allLogs)")
            }
            usleep(50_000)
        }
    }

    /// The samples in `outputURL` so far (interleaved, left first, whole frames); with `sinceLastStart`, the last start's only.
    public func readOutput(sinceLastStart: Bool = false) -> [Int16] {
        let offset: Int
        if sinceLastStart {
            lock.lock()
            offset = outputOffsetAtStart
            lock.unlock()
        } else {
            offset = 0
        }
        let data = (try? Data(contentsOf: outputURL)) ?? Data()
        // A block being written may be cut anywhere: only whole frames (4 bytes) are read.
        let count = max(0, (data.count - offset) / 4 * 2)
        guard count > 0 else { return [] }
        var samples = [Int16](repeating: 0, count: count)
        samples.withUnsafeMutableBytes { target in
            data.withUnsafeBytes { bytes in target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count * 2])) }
        }
        // The file is little-endian, as this machine is (x86-64, arm64); swapped were it not.
        return 1.littleEndian == 1 ? samples : samples.map { Int16(littleEndian: $0) }
    }

    /// Starts it unless it runs and waits (10 s at most) until `address:port` accepts; else kills it and throws with its logs.
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        if let process, process.isRunning { return }
        outputOffsetAtStart = Self.size(of: outputURL) / 4 * 4
        logOffsetAtStart = Self.size(of: logURL)
        starts += 1
        // Appended to, by every start (O_APPEND: the daemons' writes and this one's never overlap).
        let descriptor = open(logURL.path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw ExternalTool.Failure(description: "\(logURL.path): \(String(cString: strerror(errno)))") }
        let log = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        if starts > 1 { log.write(Data("--- AirPlayReceiver: started again (start \(starts)) ---\n".utf8)) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: namespace.wrapper[0])
        process.arguments = Array(namespace.wrapper.dropFirst())
            + ["/usr/bin/unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "/bin/sh", "-c", Self.script, "sh", directory.path]
        // libpulse (the `pa` backend) keeps its files under HOME: this directory, not root's.
        process.environment = ProcessInfo.processInfo.environment.merging(["HOME": directory.path]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        let deadline = Date(timeIntervalSinceNow: 10)
        while !Self.accepts(address, port: port) {
            guard process.isRunning, Date() < deadline else {
                let ending = process.isRunning ? "did not accept a connection within 10 s" : "ended (status \(process.terminationStatus))"
                end(gracefully: false)
                throw ExternalTool.Failure(description: "AirPlayReceiver \"\(name)\": shairport-sync in namespace \(namespace.name) \(ending) at \(address):\(port)\n\(allLogs)")
            }
            usleep(50_000)
        }
    }

    /// Kills it at once (SIGKILL), as a crash: its connections close, and avahi sends no goodbye. `start()` starts it again.
    public func kill() {
        lock.lock()
        defer { lock.unlock() }
        end(gracefully: false)
    }

    /// Kills it and starts it again, with the same name, port and output, and waits as `start()` does.
    public func restart() throws {
        kill()
        try start()
    }

    /// Ends it, avahi first withdrawing the service (its goodbye); what it wrote stays readable.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        end(gracefully: true)
    }

    /// Ends the running process and every process it started, and waits for them; under `lock`.
    private func end(gracefully: Bool) {
        guard let process else { return }
        self.process = nil
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        // Foundation makes each child the leader of a process group of its own; were this one
        // not, its group would be the tests', and is never signalled.
        let leadsGroup = getpgid(pid) == pid
        // unshare's one child is the PID namespace's init: sh, then the shairport-sync it became.
        let initPID = Self.children(of: pid).first
        if gracefully, leadsGroup, let initPID {
            // dbus-daemon and avahi-daemon end on SIGTERM (avahi saying goodbye); shairport-sync,
            // as init, and unshare ignore it.
            Glibc.kill(-pid, SIGTERM)
            let deadline = Date(timeIntervalSinceNow: 2)
            while !Self.children(of: initPID).allSatisfy(Self.hasEnded) && Date() < deadline { usleep(10_000) }
        }
        // The init's death kills every other process of its namespace, reaped by the kernel; unshare,
        // its parent, then ends by itself and is reaped by Foundation.
        if let initPID { Glibc.kill(initPID, SIGKILL) }
        let deadline = Date(timeIntervalSinceNow: 5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            // Not yet forked, or stuck: the whole group, unshare included (--kill-child then kills the init).
            Glibc.kill(leadsGroup ? -pid : pid, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The start script, run by sh as the namespace's init with the receiver's directory as $1.
    /// Each wait is bounded (10 s); a daemon missing makes it end, and with it the namespace.
    private static let script = #"""
        set -e
        PATH=/usr/sbin:/usr/bin:/sbin:/bin
        dir=$1
        # -n: no /run/mount/utab written (it would be written to the host's /run, not yet covered).
        mount -n -t tmpfs -o mode=0755 longform-airplay /run
        mkdir /run/dbus
        dbus-daemon --system --nofork --nopidfile --nosyslog 2>>"$dir/dbus-daemon.log" &
        tries=0
        until [ -S /run/dbus/system_bus_socket ]; do
            tries=$((tries + 1)); [ $tries -le 200 ] || { echo "AirPlayReceiver: dbus-daemon made no socket in 10 s" >&2; exit 1; }
            sleep 0.05
        done
        avahi-daemon --no-drop-root --no-chroot --no-rlimits -f "$dir/avahi-daemon.conf" 2>>"$dir/avahi-daemon.log" &
        tries=0
        until dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Avahi 2>/dev/null | grep -q true; do
            tries=$((tries + 1)); [ $tries -le 200 ] || { echo "AirPlayReceiver: avahi-daemon not on the bus in 10 s" >&2; exit 1; }
            sleep 0.05
        done
        exec shairport-sync -c "$dir/shairport-sync.conf" -u -vv >>"$dir/output.raw"
        """#

    /// avahi's configuration: on `interface` only, under the namespace's name as host name (no two
    /// receivers' alike), IPv4, publishing the receiver's service and IPv4 address and nothing else
    /// (not the link's fe80:: address, which a resolver would otherwise be as likely to hand out).
    private func avahiConfiguration(interface: String) -> String {
        """
        [server]
        host-name=\(namespace.name)
        allow-interfaces=\(interface)
        use-ipv4=yes
        use-ipv6=no
        enable-dbus=yes
        [wide-area]
        enable-wide-area=no
        [publish]
        publish-workstation=no
        publish-hinfo=no
        publish-aaaa-on-ipv4=no
        [reflector]
        enable-reflector=no

        """
    }

    /// shairport-sync's configuration (keys of /etc/shairport-sync.conf in 3.3.8). "basic"
    /// interpolation: the `pa` backend inserts or drops a whole frame where it corrects, rather
    /// than resampling every sample (and no soxr timing at start on two cores).
    private func shairportConfiguration() -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var general = [
            "name = \(quoted(name));",
            "port = \(port);",
            "udp_port_base = \(udpPortBase);",
            "udp_port_range = 10;",
            "mdns_backend = \"avahi\";",
            "interpolation = \"basic\";",
            "ignore_volume_control = \(ignoresVolume ? "\"yes\"" : "\"no\"");",
        ]
        if let password { general.append("password = \(quoted(password));") }
        if let driftTolerance { general.append("drift_tolerance_in_seconds = \(driftTolerance);") }
        var sections: [String] = []
        switch output {
        case .file:
            general.append("output_backend = \"stdout\";")
            // Each packet leaves the buffer this long before it is due: 1 s for stdout unless set,
            // more than the route's 0.4 s ahead; 0.15 s is shairport's ALSA default. (The pa
            // backend keeps its 0.35 s: with 0.15 s its first frame came 88 ms late and it flushed.)
            general.append("audio_backend_buffer_desired_length_in_seconds = 0.15;")
        case let .pulseAudio(server, sink):
            general.append("output_backend = \"pa\";")
            sections.append("pa = { server = \(quoted(server)); sink = \(quoted(sink)); application_name = \(quoted("AirPlayReceiver \(name)")); };")
        }
        sections.append("metadata = { enabled = \"no\"; };")
        sections.append("mqtt = { enabled = \"no\"; };")
        return "general = {\n" + general.map { "  " + $0 + "\n" }.joined() + "};\n" + sections.map { $0 + "\n" }.joined()
    }

    /// Whether a TCP connection to `address:port` is accepted (refused at once while nothing
    /// listens; a second at most on a cut link).
    private static func accepts(_ address: String, port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_addr.s_addr = inet_addr(address)
        target.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0
    }

    /// The children of process `pid` (of its main thread: sh forked the daemons before it became shairport-sync).
    private static func children(of pid: pid_t) -> [pid_t] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Whether process `pid` is gone or a zombie ("PID (NAME) Z …" in /proc/PID/stat).
    private static func hasEnded(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.range(of: ") ", options: .backwards) else { return true }
        return stat[nameEnd.upperBound...].first == "Z"
    }

    /// The three daemons' logs, for a failure's description.
    private var allLogs: String {
        "--- shairport-sync ---\n\(logText)\n--- avahi-daemon ---\n\(Self.text(of: directory.appendingPathComponent("avahi-daemon.log")))\n"
            + "--- dbus-daemon ---\n\(Self.text(of: directory.appendingPathComponent("dbus-daemon.log")))"
    }

    /// A file's size in bytes, 0 if it is missing.
    private static func size(of url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// A log file's text, whatever its bytes.
    private static func text(of url: URL) -> String {
        String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self)
    }
}
