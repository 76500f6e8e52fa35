import Foundation
import LongformTestSupport
import Testing

/// The web player in a real browser: Debian's chromium, headless, driven through Selenium by
/// `Tests/Browser/web_player_test.py`, which checks each step through the API and saves
/// screenshots at desktop and phone widths in `.build/screenshots`.
@Suite struct WebPlayerBrowserTests {
    @Test func aBrowserAddsReordersRemovesPlaysSeeksAndSwitchesTheRoute() throws {
        let running = try RunningServer("browser", itemSeconds: 30)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let screenshots = repository.appendingPathComponent(".build/screenshots").path
        // Debian's python3, which has Debian's Selenium (another python3 may come first in PATH).
        let result = try ExternalTool.run("/usr/bin/python3", [repository.appendingPathComponent("Tests/Browser/web_player_test.py").path,
                                                      "--port", "\(running.port)", "--pulse-route", "pulse:\(PulseAudioServer.sharedSinkName)",
                                                      "--screenshots", screenshots])
        #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
        for name in ["web-player-desktop.png", "web-player-phone.png"] {
            #expect(FileManager.default.fileExists(atPath: screenshots + "/" + name))
        }
    }
}
