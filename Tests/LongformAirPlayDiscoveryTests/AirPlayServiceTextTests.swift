import LongformAirPlayDiscovery
import Testing

/// The TXT parser and the feature and status bits, on records copied from real devices (each
/// fixture names where it came from).
struct AirPlayServiceTextTests {
    /// shairport-sync 3.3.8's own `_raop._tcp` TXT (Debian's package, as `AirPlayReceiver` runs it:
    /// the same strings avahi-browse showed here, and shairport-sync's mdns code publishes).
    static let shairportSync = ["pw=false", "txtvers=1", "ch=2", "cn=0,1", "ek=1", "et=0,1", "sv=false", "da=true", "sr=44100", "ss=16",
                                "vn=65537", "tp=TCP,UDP", "vs=105.1", "am=ShairportSync", "fv=76400.10", "sf=0x4"]
    /// A first AirPort Express's `_raop._tcp` TXT, instance `00112400B28F@Speakers`
    /// (cocoadev.github.io/AirTunesRendezvous, from `mDNS -L`).
    static let airPortExpress = ["txtvers=1", "vn=3", "pw=false", "sr=44100", "ss=16", "ch=2", "cn=1", "et=1", "ek=1", "sv=false", "sm=false"]
    /// An Apple TV 2's `_airplay._tcp` TXT, instance `Apple TV`, port 7000
    /// (openairplay.github.io/airplay-spec/service_discovery.html).
    static let appleTV2 = ["deviceid=58:55:CA:1A:E2:88", "features=0x39f7", "model=AppleTV2,1", "srcvers=130.14"]
    /// UxPlay's `_raop._tcp` TXT (antimof/UxPlay, lib/dnssdint.h: its RAOP_* values), an AirPlay mirroring receiver.
    static let uxPlay = ["txtvers=1", "ch=2", "cn=0,1,2,3", "et=0,3,5", "vv=2", "ft=0x5A7FFFE6", "rhd=5.6.0.0", "sf=0x4", "sv=false", "da=true",
                         "sr=44100", "ss=16", "vs=220.68", "tp=UDP", "md=0,1,2", "vn=65537", "am=AppleTV3,2"]

    @Test func shairportSyncsRecordIsAnAirPlay1ReceiverWithoutPassword() throws {
        let text = AirPlayServiceText(Self.shairportSync)
        #expect(text.model == "ShairportSync")
        #expect(text.statusFlags == .audioCableAttached)
        #expect(text.features == nil)
        #expect(text.encryptionTypes == [0, 1])
        #expect(!text.requiresPassword)
        #expect(!text.requiresPairing)
        #expect(!text.requiresFairPlay)
        #expect(!text.advertisesAirPlay2)
        #expect(text.deviceID == nil)
    }

    @Test func shairportSyncWithAPasswordSaysSo() {
        // shairport-sync 3.3.8 with `password` set publishes pw=true (mdns.c), its other strings alike.
        let text = AirPlayServiceText(Self.shairportSync.map { $0 == "pw=false" ? "pw=true" : $0 })
        #expect(text.requiresPassword)
    }

    @Test func anAirPortExpressIsRSAOnlyButNotFairPlay() {
        let text = AirPlayServiceText(Self.airPortExpress)
        #expect(text.model == nil)
        #expect(text.encryptionTypes == [1])
        #expect(!text.requiresPassword)
        #expect(!text.requiresFairPlay)
    }

    @Test func anAppleTV2sAirPlayRecordNamesItsDeviceAndModel() throws {
        let text = AirPlayServiceText(Self.appleTV2)
        #expect(text.deviceID == "5855CA1AE288")
        #expect(text.model == "AppleTV2,1")
        let features = try #require(text.features)
        #expect(features.rawValue == 0x39f7)
        // Bit 9 (audio) is not among them: that Apple TV played audio over RAOP only.
        #expect(!features.contains(.supportsAudio))
        #expect(!text.advertisesAirPlay2)
    }

    @Test func uxPlayTakesClearSessionsBesideFairPlay() {
        let text = AirPlayServiceText(Self.uxPlay)
        #expect(text.encryptionTypes == [0, 3, 5])
        #expect(!text.requiresFairPlay)
        #expect(text.features?.rawValue == 0x5A7F_FFE6)
    }

    @Test func onlyFairPlayEncryptionWithoutPairingIsFairPlayOnly() {
        #expect(AirPlayServiceText(["et=3,5"]).requiresFairPlay)
        #expect(AirPlayServiceText(["et=3"]).requiresFairPlay)
        #expect(!AirPlayServiceText(["et=0,3,5"]).requiresFairPlay)
        #expect(!AirPlayServiceText(["et=4"]).requiresFairPlay)
        #expect(!AirPlayServiceText([]).requiresFairPlay)
        // HomePod mini's features (below): HomeKit and CoreUtils pairing, a way round FairPlay.
        #expect(!AirPlayServiceText(["et=3,5", "ft=0x4A7FCA00,0xBC354BD0"]).requiresFairPlay)
    }

    /// pyatv's `test_get_protocol_version` (tests/protocols/airplay/test_utils.py): a HomePod mini's
    /// features say AirPlay 2, an Apple TV 3's do not.
    @Test func theFeatureBitsTellAirPlay2() throws {
        let homePodMini = AirPlayServiceText(["ft=0x4A7FCA00,0xBC354BD0"])
        #expect(homePodMini.advertisesAirPlay2)
        let features = try #require(homePodMini.features)
        #expect(features.contains(.supportsUnifiedMediaControl))
        #expect(features.contains(.supportsBufferedAudio))
        #expect(features.contains(.supportsHomeKitPairing))
        #expect(features.contains(.supportsCoreUtilsPairing))
        #expect(!AirPlayServiceText(["features=0x5A7FFFF7,0xE"]).advertisesAirPlay2)
        #expect(AirPlayServiceText(["features=0x0,0x40"]).advertisesAirPlay2)  // bit 38 alone
        #expect(AirPlayServiceText(["features=0x0,0x100"]).advertisesAirPlay2)  // bit 40 alone
        #expect(AirPlayServiceText(["features=0x0,0x10000"]).advertisesAirPlay2)  // bit 48 alone
        #expect(!AirPlayServiceText(["features=0x0,0x4000"]).advertisesAirPlay2)  // bit 46 alone: pairing, not AirPlay 2 audio
    }

    /// pyatv's `test_parse_features` and `test_bad_input` (tests/protocols/airplay/test_utils.py).
    @Test func featuresAreOneOrTwoHexWords() {
        #expect(AirPlayFeatures(text: "0x00000001")?.rawValue == 1)
        #expect(AirPlayFeatures(text: "0x40000003")?.rawValue == 0x4000_0003)
        #expect(AirPlayFeatures(text: "0x00000003,0x00000001")?.rawValue == 0x1_0000_0003)
        #expect(AirPlayFeatures(text: "0X4a7fca00,0XBC354BD0")?.rawValue == 0xBC35_4BD0_4A7F_CA00)
        #expect(AirPlayFeatures(text: "0x1C340405D4A00")?.rawValue == 0x1_C340_405D_4A00)  // one 64-bit word
        for bad in ["foo", "", "0x", "0x00000001,", ",0x00000001", "0x00000001,0x00000001,0x00000001", "0x123456789,0x1"] {
            #expect(AirPlayFeatures(text: bad) == nil, "\(bad)")
        }
        // Unlike pyatv, the 0x is optional: "1234" is read as hex.
        #expect(AirPlayFeatures(text: "1234")?.rawValue == 0x1234)
    }

    /// pyatv's `test_is_password_required` (tests/protocols/airplay/test_utils.py), and pw=1.
    @Test func aPasswordIsPwTrueOrStatusFlag0x80() {
        let cases: [([String], Bool)] = [
            ([], false), (["pw=false"], false), (["pw=true"], true), (["pw=TRUE"], true), (["pw=1"], true),
            (["sf=0x1"], false), (["sf=0x80"], true), (["flags=0x1"], false), (["flags=0x80"], true),
        ]
        for (entries, expected) in cases { #expect(AirPlayServiceText(entries).requiresPassword == expected, "\(entries)") }
    }

    /// pyatv's `test_get_pairing_requirement` (tests/protocols/airplay/test_utils.py).
    @Test func pairingIsStatusFlag0x8Or0x200() {
        let cases: [([String], Bool)] = [
            (["sf=0x1"], false), (["sf=0x200"], true), (["ft=0x1"], false), (["flags=0x1"], false), (["flags=0x200"], true),
            (["features=0x1"], false), (["sf=0x8"], true), (["flags=0x8"], true), (["flags=0x0"], false),
        ]
        for (entries, expected) in cases { #expect(AirPlayServiceText(entries).requiresPairing == expected, "\(entries)") }
    }

    @Test func keysAreCaseInsensitiveAndTheFirstOfARepeatedKeyWins() {
        let text = AirPlayServiceText(["AM=First", "am=Second", "=orphan", "flag", "empty="])
        #expect(text["am"] == "First")
        #expect(text["Am"] == "First")
        #expect(text["flag"] == "")
        #expect(text["empty"] == "")
        #expect(text.values.count == 3)
        #expect(AirPlayServiceText(["am="]).model == nil)
    }

    @Test func aDeviceIDIsAMACAddress() {
        #expect(AirPlayServiceText.normalizedDeviceID("58:55:ca:1a:e2:88") == "5855CA1AE288")
        #expect(AirPlayServiceText.normalizedDeviceID("33FA00A66F2E") == "33FA00A66F2E")
        #expect(AirPlayServiceText.normalizedDeviceID("58-55-CA-1A-E2-88") == "5855CA1AE288")
        #expect(AirPlayServiceText.normalizedDeviceID("Kitchen") == nil)
        #expect(AirPlayServiceText.normalizedDeviceID("5855CA1AE2") == nil)
    }
}
