// Avahi's client library: the system's mDNS daemon over D-Bus (browsing and resolving services),
// driven by its simple poll loop on the caller's thread. Only LongformAirPlayDiscovery imports it.
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/address.h>
#include <avahi-common/error.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/strlst.h>
