import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The few socket calls the tests' own clients and servers make, on 127.0.0.1 only.
public enum LoopbackSocket {
    /// 127.0.0.1:`port` as a socket address.
    public static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    /// A TCP connection to 127.0.0.1:`port`; the error names the port and the system's reason.
    public static func connect(port: Int) throws(ExternalTool.Failure) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ExternalTool.Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var target = address(port: UInt16(port))
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw ExternalTool.Failure(description: "connect to 127.0.0.1:\(port): \(reason)")
        }
        return descriptor
    }

    /// A socket of `type` bound to 127.0.0.1 on a free port, and that port.
    public static func bound(type: Int32) throws(ExternalTool.Failure) -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, type, 0)
        var local = address(port: 0)
        let isBound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, isBound == 0 else { throw ExternalTool.Failure(description: "bind: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        return (descriptor, UInt16(bigEndian: local.sin_port))
    }
}
