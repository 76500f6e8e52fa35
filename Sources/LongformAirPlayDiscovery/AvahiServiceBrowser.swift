import CAvahi

/// Owns one `AvahiServiceBrowser` (browsing one service type on every interface) and frees it in deinit.
///
/// Invariant: freed before the client it was made on (the `AvahiBrowseSession` holding it ends
/// inside one call of its `AirPlayBrowser`, which owns the client).
final class AvahiServiceBrowser {
    /// The service type browsed.
    let kind: AirPlayServiceKind
    private let browser: OpaquePointer

    /// Starts browsing `kind` on `client` (every interface, IPv4 and IPv6, the default domain); events go to `callback` with `userdata`.
    init(kind: AirPlayServiceKind, client: OpaquePointer, callback: AvahiServiceBrowserCallback, userdata: UnsafeMutableRawPointer) throws {
        self.kind = kind
        guard let browser = avahi_service_browser_new(client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), kind.serviceType, nil, AvahiLookupFlags(0), callback, userdata) else {
            throw AirPlayDiscoveryError(operation: "browsing \(kind.serviceType)", reason: String(cString: avahi_strerror(avahi_client_errno(client))))
        }
        self.browser = browser
    }

    deinit { avahi_service_browser_free(browser) }
}
