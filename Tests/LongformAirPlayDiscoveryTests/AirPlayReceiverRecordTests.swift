import LongformAirPlayDiscovery
import Testing

/// Merging a device's resolved services into one record.
struct AirPlayReceiverRecordTests {
    static func instance(_ kind: AirPlayServiceKind, _ name: String, address: String = "10.0.0.5", port: Int, host: String = "kitchen.local",
                         _ text: [String]) -> AirPlayServiceInstance {
        AirPlayServiceInstance(kind: kind, instanceName: name, hostName: host, address: address, port: port, text: AirPlayServiceText(text))
    }

    @Test func aRAOPInstanceIsShownByTheNameAfterItsDeviceID() {
        let raop = Self.instance(.raop, "33FA00A66F2E@Kitchen", port: 5000, AirPlayServiceTextTests.shairportSync)
        #expect(raop.displayName == "Kitchen")
        #expect(raop.deviceID == "33FA00A66F2E")
        // A name with an @ of its own keeps it; one without a device ID has none.
        #expect(Self.instance(.raop, "33FA00A66F2E@Me@Home", port: 5000, []).displayName == "Me@Home")
        #expect(Self.instance(.raop, "Speakers", port: 5000, []).deviceID == nil)
        #expect(Self.instance(.airPlay, "Tom@Work", port: 7000, []).displayName == "Tom@Work")
    }

    @Test func shairportSyncIsOneAirPlay1Receiver() throws {
        let records = AirPlayReceiverRecord.merging([Self.instance(.raop, "33FA00A66F2E@Kitchen", port: 5000, AirPlayServiceTextTests.shairportSync)])
        let record = try #require(records.first)
        #expect(records.count == 1)
        #expect(record == AirPlayReceiverRecord(name: "Kitchen", deviceID: "33FA00A66F2E", hostName: "kitchen.local", addresses: ["10.0.0.5"],
                                                raopPort: 5000, airPlayPort: nil, model: "ShairportSync", protocols: [.airPlay1],
                                                needsPassword: false, needsPairing: false, requiresFairPlay: false))
        #expect(record.routeName == "airplay:Kitchen")
    }

    /// The Apple TV 2 of openairplay's service_discovery.html: `5855CA1AE288@Apple TV` (RAOP; its TXT
    /// there reduced to the model) and `Apple TV` (AirPlay, port 7000), one device by its device ID.
    @Test func aDevicesRAOPAndAirPlayServicesAreOneRecord() throws {
        let raop = Self.instance(.raop, "5855CA1AE288@Apple TV", address: "10.0.0.7", port: 5000, host: "Apple-TV.local", ["am=AppleTV2,1", "et=0,3,5"])
        let airPlay = Self.instance(.airPlay, "Apple TV", address: "10.0.0.7", port: 7000, host: "Apple-TV.local", AirPlayServiceTextTests.appleTV2)
        let ipv6 = Self.instance(.airPlay, "Apple TV", address: "fe80::5a55:caff:fe1a:e288", port: 7000, host: "Apple-TV.local", AirPlayServiceTextTests.appleTV2)
        let records = AirPlayReceiverRecord.merging([ipv6, raop, airPlay])
        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.name == "Apple TV")
        #expect(record.deviceID == "5855CA1AE288")
        #expect(record.addresses == ["10.0.0.7", "fe80::5a55:caff:fe1a:e288"])
        #expect(record.raopPort == 5000)
        #expect(record.airPlayPort == 7000)
        #expect(record.model == "AppleTV2,1")
        #expect(record.protocols == [.airPlay1])
    }

    @Test func servicesWithoutADeviceIDMergeByNameIgnoringCase() {
        let records = AirPlayReceiverRecord.merging([
            Self.instance(.raop, "Den", port: 5000, ["am=X"]),
            Self.instance(.airPlay, "den", port: 7000, ["features=0x0,0x40", "flags=0x80"]),
        ])
        #expect(records.count == 1)
        #expect(records.first?.protocols == [.airPlay1, .airPlay2])
        #expect(records.first?.needsPassword == true)
        #expect(records.first?.raopPort == 5000)
        #expect(records.first?.airPlayPort == 7000)
    }

    @Test func twoDevicesOfOneNameStayTwoWhenTheirIDsDiffer() {
        let records = AirPlayReceiverRecord.merging([
            Self.instance(.raop, "AAAAAAAAAAAA@Kitchen", address: "10.0.0.1", port: 5000, []),
            Self.instance(.raop, "BBBBBBBBBBBB@Kitchen", address: "10.0.0.2", port: 5000, []),
        ])
        #expect(records.map(\.addresses) == [["10.0.0.1"], ["10.0.0.2"]])
    }

    @Test func recordsAreSortedByNameAndAnAirPlayOnlyDeviceSpeaksNoAirPlay1() {
        let records = AirPlayReceiverRecord.merging([
            Self.instance(.raop, "AAAAAAAAAAAA@kitchen", port: 5000, []),
            Self.instance(.airPlay, "Bedroom TV", port: 7000, AirPlayServiceTextTests.appleTV2),
            Self.instance(.raop, "CCCCCCCCCCCC@Attic", port: 5000, ["et=3,5"]),
        ])
        #expect(records.map(\.name) == ["Attic", "Bedroom TV", "kitchen"])
        #expect(records[1].protocols.isEmpty)
        #expect(records[0].requiresFairPlay)
        #expect(!records[2].requiresFairPlay)
    }

    @Test func aDiscoveryErrorNamesAvahiAndWhatFailed() {
        #expect(AirPlayDiscoveryError(reason: "Daemon not running").description == "Avahi: Daemon not running")
        #expect(AirPlayDiscoveryError(operation: "browsing _raop._tcp", reason: "Access denied").description == "Avahi: browsing _raop._tcp: Access denied")
    }
}
