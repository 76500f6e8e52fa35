/// What a file says about itself: tags, length and embedded artwork.
public struct AudioMetadata: Sendable, Equatable {
    /// The track title, if tagged.
    public var title: String?
    /// The artist, if tagged.
    public var artist: String?
    /// The album, if tagged.
    public var album: String?
    /// The length of the audio after gapless trimming, when known.
    public var duration: MediaTime
    /// Embedded cover art (JPEG or PNG bytes), if any.
    public var artwork: Artwork?

    /// Embedded picture bytes and their MIME type.
    public struct Artwork: Sendable, Equatable {
        /// The image file's bytes.
        public var data: [UInt8]
        /// `image/jpeg` or `image/png` (guessed from the bytes' signature).
        public var mimeType: String
    }

    /// Metadata with nothing known.
    public init(title: String? = nil, artist: String? = nil, album: String? = nil, duration: MediaTime = .indefinite, artwork: Artwork? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.duration = duration
        self.artwork = artwork
    }
}

import LongformCore
