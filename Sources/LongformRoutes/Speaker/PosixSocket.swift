#if canImport(Glibc)
import Glibc
#endif
import LongformCore

/// A failed socket call: which call, on what, and the system's words for it.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    /// The call and its target (`"connect to 10.0.0.2:7878"`).
    public var operation: String
    /// errno, or 0 when the failure is not a system call's (a name that does not resolve).
    public var code: Int32
    /// What the system said.
    public var reason: String

    init(_ operation: String, code: Int32 = errno, reason: String? = nil) {
        self.operation = operation
        self.code = code
        self.reason = reason ?? String(cString: strerror(code))
    }

    /// `"connect to 10.0.0.2:7878: Connection refused"`.
    public var description: String { "\(operation): \(reason)" }
}

/// One POSIX socket, owned: the one place the speaker route makes socket system calls. Closed in
/// `deinit`; `shutdown()` wakes a thread blocked on it from another thread without closing the
/// descriptor under it.
final class PosixSocket: @unchecked Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// A TCP connection to `host`:`port`, given up after `timeout` seconds.
    static func connect(host: String, port: Int, timeout: Double) throws(SocketError) -> PosixSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SocketError("resolve \(host)", code: 0, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var lastError = SocketError("connect to \(host):\(port)", code: ECONNREFUSED)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { lastError = SocketError("socket"); continue }
            let socket = PosixSocket(descriptor: descriptor)
            // Non-blocking for the connect only, so that it can time out.
            let flags = fcntl(descriptor, F_GETFL)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
            if Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
                lastError = SocketError("connect to \(host):\(port)")
                continue
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let deadline = HostClock.now() + UInt64(timeout * 1e9)
            var ready: Int32
            repeat {
                let left = deadline > HostClock.now() ? Int32((deadline - HostClock.now()) / 1_000_000) : 0
                ready = poll(&poller, 1, left)
            } while ready < 0 && errno == EINTR
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
            guard ready == 1, failure == 0 else {
                lastError = SocketError("connect to \(host):\(port)", code: ready == 0 ? ETIMEDOUT : failure)
                continue
            }
            _ = fcntl(descriptor, F_SETFL, flags)
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return socket
        }
        throw lastError
    }

    /// A UDP socket bound to a free port on every address (IPv6 and IPv4 when the host has IPv6).
    static func boundDatagramSocket() throws(SocketError) -> PosixSocket {
        let v6 = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if v6 >= 0 {
            let socket = PosixSocket(descriptor: v6)
            var zero: Int32 = 0
            setsockopt(v6, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(v6, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            if bound == 0 { return socket }
        }
        let v4 = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard v4 >= 0 else { throw SocketError("socket (UDP)") }
        let socket = PosixSocket(descriptor: v4)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(v4, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw SocketError("bind (UDP)") }
        return socket
    }

    /// The local port it is bound to.
    var localPort: Int {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let family = address.ss_family
        return withUnsafePointer(to: &address) { pointer -> Int in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// Calls that block return after `seconds` at most, so that their thread can look at the time.
    func setTimeouts(seconds: Double) {
        var interval = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `bytes`, waiting through the send timeout as long as `shouldGoOn()` says so
    /// (a full TCP window: the peer reads slowly or not at all).
    func sendAll(_ bytes: [UInt8], while shouldGoOn: () -> Bool) throws(SocketError) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if result > 0 {
                sent += result
            } else if result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                guard shouldGoOn() else { throw SocketError("send", code: ETIMEDOUT) }
            } else {
                throw SocketError("send")
            }
        }
    }

    /// Up to `maximumLength` received bytes; nil when the receive timeout passed first; empty at the end of the stream.
    func receive(maximumLength: Int = 65_536) throws(SocketError) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: maximumLength)
        let result = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, maximumLength, 0) }
        if result < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return nil }
            throw SocketError("receive")
        }
        return Array(bytes.prefix(result))
    }

    /// A datagram and who sent it; nil when the receive timeout passed first.
    func receiveDatagram(maximumLength: Int = 512) -> (bytes: [UInt8], sender: sockaddr_storage, length: socklen_t)? {
        var bytes = [UInt8](repeating: 0, count: maximumLength)
        var sender = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = bytes.withUnsafeMutableBytes { buffer in
            withUnsafeMutablePointer(to: &sender) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, buffer.baseAddress, maximumLength, 0, $0, &length) }
            }
        }
        guard result >= 0 else { return nil }
        return (Array(bytes.prefix(result)), sender, length)
    }

    /// Sends a datagram to `address`; a lost datagram is the protocol's business, not an error.
    func sendDatagram(_ bytes: [UInt8], to address: sockaddr_storage, length: socklen_t) {
        var address = address
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, buffer.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
    }

    /// Ends both directions: a thread blocked in `receive` or `sendAll` returns.
    func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }
}
