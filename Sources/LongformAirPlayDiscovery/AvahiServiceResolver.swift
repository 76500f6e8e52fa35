import CAvahi

/// Owns one `AvahiServiceResolver` (resolving one browsed instance to its host, address, port
/// and TXT record) and frees it in deinit.
///
/// Invariant: freed before the client it was made on, as `AvahiServiceBrowser` is.
final class AvahiServiceResolver {
    /// The resolver, which its callbacks name: `AvahiBrowseSession` finds this owner by it.
    let resolver: OpaquePointer

    /// Starts resolving instance `name` of `type` in `domain`, seen on `interface` over `protocol`; the answer goes to `callback` with `userdata`.
    init(client: OpaquePointer, interface: AvahiIfIndex, protocol: AvahiProtocol, name: UnsafePointer<CChar>, type: UnsafePointer<CChar>,
         domain: UnsafePointer<CChar>, callback: AvahiServiceResolverCallback, userdata: UnsafeMutableRawPointer) throws {
        // AVAHI_PROTO_UNSPEC: the address of whichever family answers, as the instance was seen.
        guard let resolver = avahi_service_resolver_new(client, interface, `protocol`, name, type, domain, AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiLookupFlags(0),
                                                        callback, userdata) else {
            throw AirPlayDiscoveryError(operation: "resolving \(String(cString: name))", reason: String(cString: avahi_strerror(avahi_client_errno(client))))
        }
        self.resolver = resolver
    }

    deinit { avahi_service_resolver_free(resolver) }
}
