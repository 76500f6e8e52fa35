import Foundation
import Logging
import LongformAPIRequests
import LongformAirPlayDiscovery
import LongformCore
import LongformLibrary
import LongformLocalRouteCatalog
import LongformPlayer
import LongformRendering
import LongformRouteCatalog
import LongformSources
import LongformStore
import Synchronization

/// The one player `longform serve` runs, and every command a client can give it. Commands run one
/// at a time (so that an item id found for one command is still where it was when the command
/// acts) and either do all they say or nothing, throwing an `APIError` that names the culprit.
/// What the player reports goes out on `events`; the state is saved through a `PlayerStateRecorder`,
/// the volume and route with the store's settings.
final class PlayerController: @unchecked Sendable {
    /// At most this many items in one add request.
    static let maximumItemsPerRequest = 1000
    /// At most this many items in the playlist (mpd's `max_playlist_length` default): every
    /// `playlist` event carries the whole list, and each client may have a few waiting.
    static let maximumPlaylistLength = 16_384
    /// Offset events skip a report that comes sooner than this after the last: of the player's
    /// reports every 0.1 s, every other one goes out, five a second (with room for jitter).
    static let offsetEventInterval: UInt64 = 150_000_000

    let player: SampleBufferPlayer
    let library: MusicLibrary
    let events: EventHub
    private let engine: PlaybackEngine
    private let store: PlayerStateStore
    private let recorder: PlayerStateRecorder
    private let sampleRate: Int
    private let logger = Logger(label: LogLabel.server)
    /// Held by every command: one at a time.
    private let commands = NSLock()
    /// Under `commands`.
    private var settings: PlayerSettings
    private var routeSpecifier: RouteSpecifier
    private let lastOffsetEvent = Atomic<UInt64>(0)
    /// The handler that forwards offsets, there only while a client listens: the player's offset
    /// reports wake several threads ten times a second, most of what playing cost without clients.
    private let offsetHandler = Mutex<SampleBufferPlayer.EventHandlerToken?>(nil)
    /// The AirPlay receivers on the network, offered as routes as they come and go.
    private let receiverWatch = Mutex<AirPlayReceiverWatch?>(nil)
    private let artworkCache = Mutex<(id: UUID, artwork: AudioMetadata.Artwork?)?>(nil)

    /// A player on `route` (else the saved route, else the machine's default), with the saved
    /// playlist, position, volume and route put back; what it reports goes out on `events`.
    init(store: PlayerStateStore, library: MusicLibrary, events: EventHub, route: RouteSpecifier?, sampleRate: Int) throws(APIError) {
        self.store = store
        self.events = events
        self.library = library
        self.sampleRate = sampleRate
        let saved: PlayerStateStore.State?
        do {
            saved = try store.load()
            settings = try store.loadSettings()
        } catch {
            throw .unavailable("cannot read the saved state: \(error)")
        }
        let (specifier, audioRoute) = try Self.openRoute(route, saved: settings.route, sampleRate: sampleRate)
        routeSpecifier = specifier
        settings.route = specifier.description
        engine = PlaybackEngine(route: audioRoute, volume: settings.volume, isMuted: settings.isMuted)
        engine.groupRoute?.setVolumes(byMemberName: settings.speakerVolumes)
        player = engine.player
        do { try engine.start() } catch { throw .unavailable("cannot play to \(specifier): \(error)") }
        recorder = PlayerStateRecorder(player: player, store: store)
        player.addEventHandler(includingOffsets: false) { [weak self] event in self?.publish(event) }
        events.onSubscribersChange { [weak self] in self?.updateOffsetHandler() }
        if let saved, !saved.entries.isEmpty {
            player.restore(saved.entries, currentIndex: saved.currentIndex, offset: saved.offset, isPlaying: saved.playbackState == .playing)
        }
        saveSettings()
        receiverWatch.withLock { watch in
            watch = AirPlayReceiverWatch { [weak self] receivers in
                guard let self else { return }
                events.publish(ServerEvent(name: "routes", payload: routes(receivers: AirPlayReceiverWatch.playable(receivers))))
            }
        }
    }

    /// The route named on the command line, else the saved one if it still opens, else the default:
    /// PulseAudio, ALSA, or the null route.
    private static func openRoute(_ named: RouteSpecifier?, saved: String?, sampleRate: Int) throws(APIError) -> (RouteSpecifier, any AudioRoute) {
        if let named { return (named, named.makeRoute(sampleRate: sampleRate)) }
        if let saved, let specifier = try? RouteSpecifier(parsing: saved), RouteCatalog.availableRoutes().contains(where: { .local($0.specifier) == specifier }) {
            return (specifier, specifier.makeRoute(sampleRate: sampleRate))
        }
        let fallback = RouteSpecifier.local(RouteCatalog.defaultRoute(fallback: .null))
        return (fallback, fallback.makeRoute(sampleRate: sampleRate))
    }

    /// Stops playback, saves, and ends the event streams.
    func shutDown() {
        receiverWatch.withLock { $0?.stop() }
        recorder.finish()
        engine.stop()
        events.finishAll()
    }

    private func command<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        commands.lock()
        defer { commands.unlock() }
        return try body()
    }

    // MARK: - Reading

    /// Everything a client shows.
    func state() -> StateJSON {
        let entries = player.entries
        let index = player.currentIndex
        let (volume, route) = command { (VolumeJSON(volume: settings.volume, isMuted: settings.isMuted), routeSpecifier.description) }
        return StateJSON(playbackState: player.playbackState.rawValue, rate: player.rate, currentIndex: index,
                         currentId: index.flatMap { entries.indices.contains($0) ? entries[$0].id : nil },
                         offset: player.currentOffset.map(Self.seconds), volume: volume.volume, isMuted: volume.isMuted,
                         route: route, playlist: entries.map(ItemJSON.init))
    }

    /// The playlist.
    func playlist() -> PlaylistJSON {
        PlaylistJSON(items: player.entries.map(ItemJSON.init), currentIndex: player.currentIndex)
    }

    /// What plays now.
    func nowPlaying() -> NowPlayingJSON {
        let entry = player.currentEntry
        let hasArtwork = entry.map { artwork(of: $0) != nil } ?? false
        return NowPlayingJSON(playbackState: player.playbackState.rawValue, item: entry.map(ItemJSON.init), index: player.currentIndex,
                              offset: player.currentOffset.map(Self.seconds), hasArtwork: hasArtwork,
                              artworkURL: hasArtwork ? "/api/now-playing/artwork?item=\(entry!.id.uuidString)" : nil)
    }

    /// The current item's embedded picture.
    func nowPlayingArtwork() throws(APIError) -> AudioMetadata.Artwork {
        guard let entry = player.currentEntry else { throw .notFound("nothing is playing") }
        guard let artwork = artwork(of: entry) else { throw .notFound("\(entry.item.displayTitle) has no artwork") }
        return artwork
    }

    /// The artwork of `entry`, read once per current item. Only files are read: a stream would
    /// be opened a second time just for a picture.
    private func artwork(of entry: SampleBufferPlayer.Entry) -> AudioMetadata.Artwork? {
        if let cached = artworkCache.withLock({ $0 }), cached.id == entry.id { return cached.artwork }
        let artwork = entry.item.location.contains("://") ? nil : library.artwork(atPath: entry.item.location)
        artworkCache.withLock { $0 = (entry.id, artwork) }
        return artwork
    }

    // MARK: - Playlist

    /// Adds items at `index` (the end when nil); returns the new entries.
    func add(_ request: AddItemsRequest) throws(APIError) -> [ItemJSON] {
        guard !request.items.isEmpty else { throw .badRequest("no items to add") }
        guard request.items.count <= Self.maximumItemsPerRequest else {
            throw .badRequest("\(request.items.count) items in one request; at most \(Self.maximumItemsPerRequest)")
        }
        return try command { () throws(APIError) in
            // Every item is checked before any is added: a bad one changes nothing.
            var newItems: [PlaylistItem] = []
            for (position, item) in request.items.enumerated() { newItems.append(try playlistItem(for: item, at: position)) }
            let count = player.entries.count
            guard count + newItems.count <= Self.maximumPlaylistLength else {
                throw .conflict("the playlist holds \(count) item\(count == 1 ? "" : "s"); adding \(newItems.count) would pass its limit of \(Self.maximumPlaylistLength)")
            }
            let index = request.index ?? count
            do { try player.insert(contentsOf: newItems, at: index) } catch { throw .badRequest("\(error)") }
            return player.entries[index..<(index + newItems.count)].map(ItemJSON.init)
        }
    }

    private func playlistItem(for request: NewItemRequest, at position: Int) throws(APIError) -> PlaylistItem {
        let given = [request.path != nil, request.url != nil, request.libraryId != nil].filter { $0 }.count
        guard given == 1 else { throw .badRequest("item \(position): give exactly one of path, url and libraryId") }
        if let path = request.path {
            let realPath: String
            do { realPath = try library.directories.confine(path) } catch {
                switch error {
                case .outsideMusicDirectories, .noMusicDirectories: throw .forbidden(error.description)
                default: throw .notFound(error.description)
                }
            }
            // What the library already read saves the player opening the file again for its tags.
            if let track = try? library.track(path: realPath) { return Self.playlistItem(for: track) }
            return PlaylistItem(location: realPath)
        }
        if let text = request.url {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host?.isEmpty == false else {
                throw .badRequest("\(text): only http and https URLs can be added")
            }
            return PlaylistItem(location: text)
        }
        let id = request.libraryId!
        let track: LibraryTrack?
        do { track = try library.track(id: id) } catch { throw .unavailable("cannot read the library: \(error)") }
        guard let track else { throw .notFound("no library track has id \(id)") }
        return Self.playlistItem(for: track)
    }

    private static func playlistItem(for track: LibraryTrack) -> PlaylistItem {
        PlaylistItem(location: track.path, title: track.title, artist: track.artist, album: track.album,
                     duration: track.durationSeconds.map { MediaTime(seconds: $0, preferredTimescale: 1_000_000) })
    }

    /// Removes the item `id`.
    func remove(id: UUID) throws(APIError) {
        try command { () throws(APIError) in
            let index = try index(of: id)
            do { try player.remove(at: index) } catch { throw .badRequest("\(error)") }
        }
    }

    /// Moves the item `id` to `index`.
    func move(id: UUID, to index: Int) throws(APIError) {
        try command { () throws(APIError) in
            let source = try self.index(of: id)
            let count = player.entries.count
            guard (0..<count).contains(index) else { throw .badRequest("index \(index) is outside the playlist (\(count) item\(count == 1 ? "" : "s"))") }
            do { try player.move(from: source, to: index) } catch { throw .badRequest("\(error)") }
        }
    }

    /// Empties the playlist (and stops).
    func clear() {
        command { player.replaceAll(with: []) }
    }

    private func index(of id: UUID) throws(APIError) -> Int {
        guard let index = player.entries.firstIndex(where: { $0.id == id }) else { throw .notFound("no playlist item has id \(id.uuidString)") }
        return index
    }

    // MARK: - Transport

    /// Plays (resumes), or plays the item `id` from its start.
    func play(id: UUID?) throws(APIError) {
        try command { () throws(APIError) in
            guard !player.entries.isEmpty else { throw .conflict("the playlist is empty") }
            if let id {
                let index = try index(of: id)
                do { try player.seek(toItemAt: index) } catch { throw .badRequest("\(error)") }
                // From paused too: "play this item" plays. Stopped by now, the item failed and was
                // the last: that is the playlist's end, not a reason to start over from the first.
                if player.playbackState == .paused { player.play() }
            } else {
                player.play()
            }
        }
    }

    /// Pauses.
    func pause() { command { player.pause() } }

    /// Stops.
    func stop() { command { player.stop() } }

    /// Next item (stops after the last).
    func next() throws(APIError) {
        try command { () throws(APIError) in
            guard player.currentIndex != nil else { throw .conflict(PlayerError.notPlaying(command: "next").description) }
            player.next()
        }
    }

    /// Previous item (the first again from its start).
    func previous() throws(APIError) {
        try command { () throws(APIError) in
            guard player.currentIndex != nil else { throw .conflict(PlayerError.notPlaying(command: "previous").description) }
            player.previous()
        }
    }

    /// Moves to `offset` seconds into the current item, or into the item `id`.
    func seek(_ request: SeekRequest) throws(APIError) {
        guard request.offset.isFinite, request.offset >= 0 else { throw .badRequest("offset \(request.offset) is not a time in the item") }
        let offset = MediaTime(seconds: request.offset, preferredTimescale: 1_000_000)
        try command { () throws(APIError) in
            let index: Int
            if let id = request.id {
                index = try self.index(of: id)
            } else {
                guard let current = player.currentIndex else { throw .conflict(PlayerError.notPlaying(command: "seek").description) }
                index = current
            }
            let entry = player.entries[index]
            if let duration = entry.item.duration, duration.isNumeric, request.offset > duration.seconds {
                throw .badRequest("offset \(request.offset) s is past the end of \(entry.item.displayTitle) (\(Self.seconds(duration)) s)")
            }
            do {
                if request.id == nil { try player.seek(to: offset) } else { try player.seek(toItemAt: index, offset: offset) }
            } catch {
                throw .conflict("\(error)")
            }
        }
    }

    // MARK: - Volume

    /// The volume and mute.
    func volume() -> VolumeJSON { command { VolumeJSON(volume: settings.volume, isMuted: settings.isMuted) } }

    /// Sets the volume (0 to 1) and/or mute.
    func setVolume(_ request: VolumeRequest) throws(APIError) -> VolumeJSON {
        if let volume = request.volume, !PlayerSettings.isValidVolume(volume) { throw .badRequest("volume \(volume) is outside 0...1") }
        let result = command {
            if let volume = request.volume { settings.volume = volume }
            if let muted = request.isMuted { settings.isMuted = muted }
            engine.setVolume(settings.volume, isMuted: settings.isMuted)
            saveSettings()
            let result = VolumeJSON(volume: settings.volume, isMuted: settings.isMuted)
            // Under the lock: two changes at once are announced in the order they were made.
            events.publish(ServerEvent(name: "volume", payload: result))
            return result
        }
        return result
    }

    // MARK: - Speakers

    /// The current route's network speakers and their own volumes (none on other routes).
    func speakers() -> SpeakersJSON { command { speakersOfRoute() } }

    /// Sets the own volume (0 to 1) of speaker `index` of the current route; the player's volume
    /// applies on top. Kept by address, so that the speaker has it again on any route it is in.
    func setVolume(_ volume: Float, ofSpeaker index: Int) throws(APIError) -> SpeakerJSON {
        guard PlayerSettings.isValidVolume(volume) else { throw .badRequest("volume \(volume) is outside 0...1") }
        return try command { () throws(APIError) -> SpeakerJSON in
            guard let route = engine.groupRoute else {
                throw .notFound("the route \(routeSpecifier) has no network speakers (GET /api/speakers lists them)")
            }
            guard route.memberNames.indices.contains(index) else {
                throw .notFound("no speaker has index \(index): the route has \(route.memberNames.count) (GET /api/speakers lists them)")
            }
            route.setVolume(volume, ofMember: index)
            settings.speakerVolumes[route.memberNames[index]] = volume
            saveSettings()
            let speakers = speakersOfRoute()
            events.publish(ServerEvent(name: "speakers", payload: speakers))
            return speakers.speakers[index]
        }
    }

    /// Under `commands`.
    private func speakersOfRoute() -> SpeakersJSON {
        guard let route = engine.groupRoute else { return SpeakersJSON(speakers: []) }
        return SpeakersJSON(speakers: route.memberNames.enumerated().map { index, name in
            SpeakerJSON(index: index, address: name, volume: route.volume(ofMember: index))
        })
    }

    // MARK: - Routes

    /// The routes a client may pick: this machine's (not WAV files: a client does not choose where
    /// files go), then the AirPlay receivers on the network now.
    func routes() -> RoutesJSON { routes(receivers: receiverWatch.withLock { $0?.playableReceivers } ?? []) }

    /// The routes, with `receivers` as the AirPlay receivers found.
    private func routes(receivers: [AirPlayReceiverRecord]) -> RoutesJSON {
        let current = command { routeSpecifier }
        var routes = Self.pickableRoutes().map { RouteJSON(id: $0.specifier.description, description: $0.description, isCurrent: .local($0.specifier) == current) }
        for receiver in receivers {
            routes.append(RouteJSON(id: receiver.routeName, description: Self.description(of: receiver), isCurrent: current.description == receiver.routeName))
        }
        if !routes.contains(where: \.isCurrent) {
            routes.insert(RouteJSON(id: current.description, description: "the route the server was started with", isCurrent: true), at: 0)
        }
        return RoutesJSON(current: current.description, routes: routes)
    }

    /// `AirPlay: Kitchen (ShairportSync, 10.0.0.5:5000, password)`.
    private static func description(of receiver: AirPlayReceiverRecord) -> String {
        let details = [receiver.model, receiver.preferredAddress.map { "\($0):\(receiver.raopPort ?? 0)" }, receiver.needsPassword ? "password" : nil]
        return "AirPlay: \(receiver.name) (" + details.compactMap { $0 }.joined(separator: ", ") + ")"
    }

    private static func pickableRoutes() -> [RouteCatalog.Entry] {
        RouteCatalog.availableRoutes().filter { if case .wav = $0.specifier { false } else { true } }
    }

    /// Moves playback to the route `id` (one of `routes()`), at the same time and rate.
    func selectRoute(_ id: String) throws(APIError) -> RoutesJSON {
        let specifier: RouteSpecifier
        do { specifier = try RouteSpecifier(parsing: id) } catch { throw .badRequest("\(error)") }
        let isReceiver = (receiverWatch.withLock { $0?.playableReceivers } ?? []).contains { $0.routeName == specifier.description }
        guard isReceiver || Self.pickableRoutes().contains(where: { .local($0.specifier) == specifier }) else {
            throw .notFound("\(id) is not one of this machine's routes or the AirPlay receivers found (GET /api/routes lists them)")
        }
        try command { () throws(APIError) in
            guard specifier != routeSpecifier else { return }
            let route = specifier.makeRoute(sampleRate: sampleRate)
            (route as? any GroupVolumeRoute)?.setVolumes(byMemberName: settings.speakerVolumes)
            // A failed pick changes nothing: the engine goes back to the route that worked.
            do { try engine.setRoute(route) } catch { throw .unavailable("cannot play to \(specifier): \(error)") }
            logger.info("route: \(specifier)")
            routeSpecifier = specifier
            settings.route = specifier.description
            saveSettings()
            events.publish(ServerEvent(name: "route", payload: RouteEventJSON(route: specifier.description)))
            events.publish(ServerEvent(name: "speakers", payload: speakersOfRoute()))
        }
        return routes()
    }

    // MARK: - Events

    /// Every client's first event: the whole state.
    func stateEvent() -> ServerEvent { ServerEvent(name: "state", payload: state()) }

    /// Asks the player for offsets while at least one client listens, and stops asking after the last.
    private func updateOffsetHandler() {
        offsetHandler.withLock { token in
            let isWanted = events.subscriberCount > 0
            if isWanted, token == nil {
                token = player.addEventHandler(includingOffsets: true) { [weak self] event in
                    if case .offsetChanged = event { self?.publish(event) }
                }
            } else if !isWanted, let current = token {
                player.removeEventHandler(current)
                token = nil
            }
        }
    }

    private func publish(_ event: PlayerEvent) {
        switch event {
        case .currentItemChanged(let index, let id):
            let entry = player.currentEntry
            events.publish(ServerEvent(name: "currentItem", payload: CurrentItemEventJSON(index: index, id: id, item: entry.map(ItemJSON.init))))
        case .offsetChanged(let offset):
            let now = HostClock.now()
            let last = lastOffsetEvent.load(ordering: .relaxed)
            guard now &- last >= Self.offsetEventInterval else { return }
            lastOffsetEvent.store(now, ordering: .relaxed)
            events.publish(ServerEvent(name: "offset", payload: OffsetEventJSON(id: player.currentEntry?.id, offset: Self.seconds(offset))))
        case .rateChanged(let rate):
            events.publish(ServerEvent(name: "rate", payload: RateEventJSON(rate: rate)))
        case .itemFailed(let index, let id, let error):
            events.publish(ServerEvent(name: "itemFailed", payload: ItemFailedEventJSON(index: index, id: id, error: error.description)))
            events.publish(ServerEvent(name: "playlist", payload: playlist()))
        case .playlistChanged:
            events.publish(ServerEvent(name: "playlist", payload: playlist()))
        case .stateChanged(let state):
            events.publish(ServerEvent(name: "playbackState", payload: PlaybackStateEventJSON(playbackState: state.rawValue)))
        }
    }

    /// Under `commands` (or before the controller is shared).
    private func saveSettings() {
        do { try store.saveSettings(settings) } catch { logger.error("cannot save the settings: \(error)") }
    }

    static func seconds(_ time: MediaTime) -> Double {
        time.isNumeric ? (time.seconds * 1_000_000).rounded() / 1_000_000 : 0
    }
}
