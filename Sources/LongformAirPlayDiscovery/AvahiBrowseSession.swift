import CAvahi
import Logging

/// One browse of AirPlay's service types on an `AirPlayBrowser`'s client: the browsers, the
/// resolvers under way and what they resolved, fed by Avahi's callbacks on the browsing thread.
///
/// Invariant: lives inside one call of its `AirPlayBrowser` (which owns the client and the poll
/// loop the callbacks run on), so its browsers and resolvers are freed before the client; Avahi
/// holds it unretained as its callbacks' user data, and calls them only from that poll loop.
final class AvahiBrowseSession {
    /// One browsed instance: a service type's instance as seen on one interface over one address family.
    private struct InstanceKey: Hashable {
        var kind: AirPlayServiceKind
        var name: String
        var interface: AvahiIfIndex
        var addressFamily: AvahiProtocol
    }

    private let client: OpaquePointer
    private let logger: Logger
    private var browsers: [AvahiServiceBrowser] = []
    /// The resolvers under way, by the pointer their callbacks name.
    private var resolvers: [OpaquePointer: AvahiServiceResolver] = [:]
    /// What each instance resolved to; an instance removed from the network is removed from here.
    private var resolved: [InstanceKey: AirPlayServiceInstance] = [:]
    /// The order instances were first resolved in, so that a device's addresses keep that order.
    private var resolvedOrder: [InstanceKey] = []
    /// The service types whose browser said "all for now" or failed.
    private var settledKinds: Set<AirPlayServiceKind> = []
    /// The first browser failure, if any.
    private(set) var failure: AirPlayDiscoveryError?

    /// Starts browsing every service type of `AirPlayServiceKind` on `client`.
    init(client: OpaquePointer, logger: Logger) throws {
        self.client = client
        self.logger = logger
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        for kind in AirPlayServiceKind.allCases {
            browsers.append(try AvahiServiceBrowser(kind: kind, client: client, callback: { _, interface, addressFamily, event, name, type, domain, _, userdata in
                guard let userdata else { return }
                Unmanaged<AvahiBrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                    .browserReported(event, interface: interface, addressFamily: addressFamily, name: name, type: type, domain: domain)
            }, userdata: userdata))
        }
    }

    /// Whether every browser has said "all for now" (or failed) and no resolver is under way.
    var isSettled: Bool { settledKinds.count == browsers.count && resolvers.isEmpty }

    /// Whether every browser failed: nothing more will come.
    var hasFailedEntirely: Bool { failure != nil && settledKinds.count == browsers.count && resolved.isEmpty && resolvers.isEmpty }

    /// The instances resolved so far and still on the network, in the order first resolved.
    var instances: [AirPlayServiceInstance] { resolvedOrder.compactMap { resolved[$0] } }

    /// A browser's event: a new instance is resolved, a removed one forgotten.
    private func browserReported(_ event: AvahiBrowserEvent, interface: AvahiIfIndex, addressFamily: AvahiProtocol,
                                 name: UnsafePointer<CChar>?, type: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?) {
        let kind = type.flatMap { AirPlayServiceKind(rawValue: String(cString: $0)) }
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain else { return }
            do {
                let resolver = try AvahiServiceResolver(client: client, interface: interface, protocol: addressFamily, name: name, type: type, domain: domain,
                                                        callback: { resolver, interface, addressFamily, event, name, type, _, hostName, address, port, text, _, userdata in
                    guard let resolver, let userdata else { return }
                    Unmanaged<AvahiBrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                        .resolverReported(resolver, event: event, interface: interface, addressFamily: addressFamily, name: name, type: type,
                                          hostName: hostName, address: address, port: port, text: text)
                }, userdata: Unmanaged.passUnretained(self).toOpaque())
                resolvers[resolver.resolver] = resolver
            } catch {
                logger.warning("AirPlay discovery: \(error)")
            }
        case AVAHI_BROWSER_REMOVE:
            guard let kind, let name else { return }
            let key = InstanceKey(kind: kind, name: String(cString: name), interface: interface, addressFamily: addressFamily)
            if resolved.removeValue(forKey: key) != nil { logger.debug("AirPlay discovery: \(key.name) (\(kind.serviceType)) left") }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            if let kind { settledKinds.insert(kind) }
        case AVAHI_BROWSER_FAILURE:
            let error = AirPlayDiscoveryError(operation: "browsing \(kind?.serviceType ?? "AirPlay services")", reason: String(cString: avahi_strerror(avahi_client_errno(client))))
            logger.warning("AirPlay discovery: \(error)")
            if failure == nil { failure = error }
            if let kind { settledKinds.insert(kind) }
        default:
            // AVAHI_BROWSER_CACHE_EXHAUSTED: the cache is read; "all for now" follows.
            break
        }
    }

    /// A resolver's answer: the instance recorded (or the failure logged), the resolver freed.
    private func resolverReported(_ resolver: OpaquePointer, event: AvahiResolverEvent, interface: AvahiIfIndex, addressFamily: AvahiProtocol,
                                  name: UnsafePointer<CChar>?, type: UnsafePointer<CChar>?, hostName: UnsafePointer<CChar>?,
                                  address: UnsafePointer<AvahiAddress>?, port: UInt16, text: UnsafeMutablePointer<AvahiStringList>?) {
        // Freed when this returns (Avahi allows freeing a resolver in its own callback), whatever it said.
        let owner = resolvers.removeValue(forKey: resolver)
        defer { withExtendedLifetime(owner) {} }
        guard let name, let type, let kind = AirPlayServiceKind(rawValue: String(cString: type)) else { return }
        let instanceName = String(cString: name)
        guard event == AVAHI_RESOLVER_FOUND, let address else {
            logger.debug("AirPlay discovery: \(instanceName) (\(kind.serviceType)) did not resolve: \(String(cString: avahi_strerror(avahi_client_errno(client))))")
            return
        }
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&buffer, buffer.count, address)
        let instance = AirPlayServiceInstance(kind: kind, instanceName: instanceName, hostName: hostName.map { String(cString: $0) } ?? "",
                                              address: String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), port: Int(port), text: AirPlayServiceText(Self.strings(of: text)))
        let key = InstanceKey(kind: kind, name: instanceName, interface: interface, addressFamily: addressFamily)
        if resolved.updateValue(instance, forKey: key) == nil, !resolvedOrder.contains(key) { resolvedOrder.append(key) }
        logger.debug("AirPlay discovery: \(instanceName) (\(kind.serviceType)) at \(instance.address):\(instance.port), TXT \(instance.text.values)")
    }

    /// A TXT record's strings, each decoded as UTF-8 (an invalid byte becomes U+FFFD).
    private static func strings(of list: UnsafeMutablePointer<AvahiStringList>?) -> [String] {
        var strings: [String] = []
        var item = list
        while let node = item {
            strings.append(String(decoding: UnsafeBufferPointer(start: avahi_string_list_get_text(node), count: avahi_string_list_get_size(node)), as: UTF8.self))
            item = avahi_string_list_get_next(node)
        }
        return strings
    }
}
