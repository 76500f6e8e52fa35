import Foundation
import LongformTestSupport
import Testing

/// `longform-null-meter`, the smallest program on the engine: it plays to the null route, and a
/// tool that needs only that route links no device library and no swift-crypto.
@Suite struct NullRouteMeterTests {
    static var meter: String { ExternalTool.builtExecutable(named: "longform-null-meter") }

    @Test func itHearsAFileAtTheLevelItWasMadeAt() throws {
        let sine = TestAudio.path("meter-sine-half.wav")
        // A 440 Hz sine at half of full scale (-6.02 dB), 1.5 s.
        try ExternalTool.check("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", sine, "synth", "1.5", "sine", "440", "gain", "-6.02"])
        let result = try ExternalTool.check(Self.meter, [sine])
        let peaks = result.output.split(separator: "\n").compactMap { line in line.split(separator: " ").last.flatMap { Double($0) } }
        #expect(peaks.count == 2, "\(result.output)")
        #expect(peaks.first.map { abs($0 - 0.5) < 0.002 } == true, "\(result.output)")
        #expect(result.output.hasPrefix("second 0: peak "), "\(result.output)")
    }

    @Test func aMissingFileIsNamedAndFailsTheRun() throws {
        let result = try ExternalTool.run(Self.meter, ["/nonexistent/meter.wav"])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("/nonexistent/meter.wav"), "\(result.errorOutput)")
    }

    @Test func itLinksNeitherPulseAudioNorALSANorSwiftCrypto() throws {
        let meterLibraries = try ExternalTool.check("ldd", [Self.meter]).output
        let longformLibraries = try ExternalTool.check("ldd", [ExternalTool.longformExecutable]).output
        for library in ["libpulse", "libasound"] {
            #expect(!meterLibraries.contains(library), "\(meterLibraries)")
            // The check can fail: the full command links them.
            #expect(longformLibraries.contains(library), "\(longformLibraries)")
        }
        // swift-crypto is linked statically; its BoringSSL symbols carry this prefix.
        let cryptoPrefix = "CCryptoBoringSSL_"
        #expect(try ExternalTool.run("grep", ["-c", cryptoPrefix, Self.meter]).output.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        #expect(try ExternalTool.check("grep", ["-q", cryptoPrefix, ExternalTool.longformExecutable]).status == 0)
    }
}
