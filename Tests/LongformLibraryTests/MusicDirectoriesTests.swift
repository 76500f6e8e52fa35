import Foundation
import LongformLibrary
import LongformTestSupport
import Testing

/// Paths are confined to the music directories, whatever `..` or symlinks say.
@Suite struct MusicDirectoriesTests {
    @Test func pathsResolveInsideTheDirectoriesOrAreRefused() throws {
        let root = TestAudio.path("confine-\(UUID().uuidString.prefix(8))")
        let music = root + "/music"
        try FileManager.default.createDirectory(atPath: music + "/a", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/musicbox", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: music + "/a/song.flac", contents: Data([1]))
        FileManager.default.createFile(atPath: root + "/secret.flac", contents: Data([1]))
        FileManager.default.createFile(atPath: root + "/musicbox/x.flac", contents: Data([1]))
        try FileManager.default.createSymbolicLink(atPath: music + "/out", withDestinationPath: root)
        try FileManager.default.createSymbolicLink(atPath: music + "/in.flac", withDestinationPath: music + "/a/song.flac")

        let directories = try MusicDirectories([music])
        #expect(try directories.confine("a/song.flac") == music + "/a/song.flac")
        #expect(try directories.confine(music + "/a/../a/song.flac") == music + "/a/song.flac")
        #expect(try directories.confine("in.flac") == music + "/a/song.flac", "a symlink that stays inside is followed")
        #expect(throws: LibraryError.outsideMusicDirectories("../secret.flac")) { try directories.confine("../secret.flac") }
        #expect(throws: LibraryError.outsideMusicDirectories("out/secret.flac")) { try directories.confine("out/secret.flac") }
        #expect(throws: LibraryError.outsideMusicDirectories(root + "/musicbox/x.flac"), "a directory whose name starts alike is not inside") {
            try directories.confine(root + "/musicbox/x.flac")
        }
        #expect(throws: LibraryError.noSuchFile("a"), "a directory is not a file") { try directories.confine("a") }
        #expect(throws: LibraryError.noSuchFile("a/none.flac")) { try directories.confine("a/none.flac") }
        #expect(throws: LibraryError.noMusicDirectories("a/song.flac")) { try MusicDirectories([]).confine("a/song.flac") }
        #expect(throws: LibraryError.notADirectory(music + "/a/song.flac")) { try MusicDirectories([music + "/a/song.flac"]) }
    }
}
