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

    package init(_ operation: String, code: Int32 = errno, reason: String? = nil) {
        self.operation = operation
        self.code = code
        self.reason = reason ?? String(cString: strerror(code))
    }

    /// `"connect to 10.0.0.2:7878: Connection refused"`.
    public var description: String { "\(operation): \(reason)" }
}

/// One POSIX UDP socket, owned: the one place the clock exchange makes socket system calls, for
/// the kernel's arrival stamps SwiftNIO does not expose (every TCP connection, the sender's links
/// and the speaker's, goes through SwiftNIO). Closed in `deinit`;
/// `shutdown()` wakes a thread blocked on it from another thread without closing the descriptor
/// under it.
package final class PosixSocket: @unchecked Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// The addresses of `host`:`port` for sockets of `type` (free them with `freeaddrinfo`).
    private static func resolve(host: String, port: Int, type: __socket_type, flags: Int32 = 0, family: Int32 = AF_UNSPEC) throws(SocketError) -> UnsafeMutablePointer<addrinfo> {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = Int32(type.rawValue)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw SocketError("resolve \(host)", code: 0, reason: String(cString: gai_strerror(status)))
        }
        return list
    }

    /// A UDP socket bound to `port` (0: a free one) on every address (IPv6 and IPv4 when the host has IPv6).
    package static func boundDatagramSocket(port: Int = 0) throws(SocketError) -> PosixSocket {
        let v6 = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if v6 >= 0 {
            let socket = PosixSocket(descriptor: v6)
            var zero: Int32 = 0
            setsockopt(v6, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
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
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(v4, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw SocketError("bind (UDP) to port \(port)") }
        return socket
    }

    /// The local port it is bound to.
    package var localPort: Int {
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
    package func setTimeouts(seconds: Double) {
        var interval = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A UDP socket connected to the numeric address `host`:`port`: it sends there, and the
    /// system hands it datagrams from there only.
    package static func connectedDatagramSocket(host: String, port: Int) throws(SocketError) -> PosixSocket {
        let address = try resolve(host: host, port: port, type: SOCK_DGRAM, flags: AI_NUMERICHOST | AI_NUMERICSERV)
        defer { freeaddrinfo(address) }
        let descriptor = socket(address.pointee.ai_family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError("socket (UDP)") }
        let socket = PosixSocket(descriptor: descriptor)
        guard Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            throw SocketError("connect (UDP) to \(host):\(port)")
        }
        return socket
    }

    /// Connects this (bound) UDP socket to the numeric address `host`:`port`: it sends there, and
    /// the system hands it datagrams from there only, on the port it is bound to.
    package func connect(toHost host: String, port: Int) throws(SocketError) {
        // A dual-stack (IPv6) socket reaches an IPv4 host by its v4-mapped address.
        var own = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &own) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        let family = Int32(own.ss_family)
        let address = try Self.resolve(host: host, port: port, type: SOCK_DGRAM, flags: AI_NUMERICHOST | AI_NUMERICSERV | (family == AF_INET6 ? AI_V4MAPPED : 0), family: family)
        defer { freeaddrinfo(address) }
        var candidate: UnsafeMutablePointer<addrinfo>? = address
        while let entry = candidate {
            if Glibc.connect(descriptor, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 { return }
            candidate = entry.pointee.ai_next
        }
        throw SocketError("connect (UDP) to \(host):\(port)")
    }

    /// Has the system stamp each datagram with the time it arrived (SO_TIMESTAMPNS), so that
    /// `receiveDatagram` reports that time and not when a busy thread got round to reading it.
    package func stampArrivals() {
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, Self.timestampOption, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// SO_TIMESTAMPNS, which is also the control message's type (SCM_TIMESTAMPNS); Glibc's
    /// definition is a macro Swift does not import. 35 on every 64-bit Linux architecture
    /// except the few (parisc, sparc) this never runs on.
    private static let timestampOption: Int32 = 35

    /// Whether a datagram (or an error) is waiting, after waiting up to `milliseconds`.
    package func waitUntilReadable(milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, max(milliseconds, 0)) > 0
    }

    /// Waits up to `milliseconds` for the socket to be shut down or to fail, not for a datagram
    /// (with `stampArrivals()`, what came meanwhile is read with the time it came): whether it was.
    package func waitUntilShutDown(milliseconds: Int32) -> Bool {
        // Nothing asked: POLLHUP and POLLERR are reported anyway, and a UDP socket shut down both
        // ways is hung up, a refused send leaves an error.
        var poller = pollfd(fd: descriptor, events: 0, revents: 0)
        return poll(&poller, 1, max(milliseconds, 0)) > 0
    }

    /// A received datagram: its bytes, who sent it, and when it arrived.
    package struct Datagram {
        /// Its payload.
        package var bytes: [UInt8]
        /// The sender's address, for an answer.
        package var sender: sockaddr_storage
        /// The length of `sender`.
        package var senderLength: socklen_t
        /// When it arrived, on the host clock (ns): the system's stamp after `stampArrivals()`,
        /// else the time it was read.
        package var receivedAt: UInt64
    }

    /// A datagram; nil when the receive timeout passed first or the receive failed (on a
    /// connected socket, the peer's port refusing an earlier datagram).
    package func receiveDatagram(maximumLength: Int = 512) -> Datagram? {
        var bytes = [UInt8](repeating: 0, count: maximumLength)
        var sender = sockaddr_storage()
        // Room for one control message carrying a timespec, 8-byte aligned as cmsghdr needs.
        var control = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var message = msghdr()
        let (result, stamp): (Int, timespec?) = bytes.withUnsafeMutableBytes { buffer in
            withUnsafeMutablePointer(to: &sender) { senderPointer in
                withUnsafeMutableBytes(of: &control) { controlBytes in
                    var vector = iovec(iov_base: buffer.baseAddress, iov_len: maximumLength)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        message.msg_name = UnsafeMutableRawPointer(senderPointer)
                        message.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                        message.msg_iov = vectorPointer
                        message.msg_iovlen = 1
                        message.msg_control = controlBytes.baseAddress
                        message.msg_controllen = controlBytes.count
                        let result = recvmsg(descriptor, &message, 0)
                        let controlLength = result >= 0 ? min(Int(message.msg_controllen), controlBytes.count) : 0
                        return (result, Self.arrivalStamp(in: UnsafeRawBufferPointer(rebasing: controlBytes.prefix(controlLength))))
                    }
                }
            }
        }
        guard result >= 0 else { return nil }
        return Datagram(bytes: Array(bytes.prefix(result)), sender: sender, senderLength: message.msg_namelen,
                        receivedAt: stamp.map { HostClock.hostTime(ofRealTime: Int64($0.tv_sec) * 1_000_000_000 + Int64($0.tv_nsec)) } ?? HostClock.now())
    }

    /// The SCM_TIMESTAMPNS timespec among the control messages, if there is one. Read by hand:
    /// the CMSG_* macros are not imported (a header is 16 bytes on 64-bit Linux, data follow it,
    /// each message is padded to 8 bytes).
    private static func arrivalStamp(in control: UnsafeRawBufferPointer) -> timespec? {
        let headerLength = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
        var offset = 0
        while offset + headerLength <= control.count {
            let length = control.loadUnaligned(fromByteOffset: offset, as: Int.self)
            let level = control.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self)
            let type = control.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
            guard length >= headerLength, offset + length <= control.count else { return nil }
            if level == SOL_SOCKET, type == timestampOption, length >= headerLength + MemoryLayout<timespec>.size {
                return control.loadUnaligned(fromByteOffset: offset + headerLength, as: timespec.self)
            }
            offset += (length + 7) & ~7
        }
        return nil
    }

    /// Sends a datagram to `address`; a lost datagram is the protocol's business, not an error.
    package func sendDatagram(_ bytes: [UInt8], to address: sockaddr_storage, length: socklen_t) {
        var address = address
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, buffer.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
    }

    /// Sends a datagram on a connected socket; lost or refused is the protocol's business.
    package func sendDatagram(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Ends both directions: a thread blocked in `receive` or `sendAll` returns.
    package func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }
}
