/// A route to a group of outputs that apply the volume themselves as they play (network speakers):
/// its volume is set on the route, not as the renderer's gain, which would be heard only after
/// the minutes of audio sent ahead. Each member has a volume of its own on top of the group's.
public protocol GroupVolumeRoute: AudioRoute {
    /// The members' names (`HOST:PORT` for a speaker), in order: member `index` is `memberNames[index]`.
    var memberNames: [String] { get }
    /// Sets member `index`'s own volume, or the group's when `index` is nil; 0 to 1.
    func setVolume(_ volume: Float, ofMember index: Int?)
    /// The volume of member `index`, or the group's when `index` is nil; 0 to 1.
    func volume(ofMember index: Int?) -> Float
}

extension GroupVolumeRoute {
    /// Sets the own volumes of the members named in `volumes`; the others keep theirs.
    public func setVolumes(byMemberName volumes: [String: Float]) {
        for (index, name) in memberNames.enumerated() {
            if let volume = volumes[name] { setVolume(volume, ofMember: index) }
        }
    }
}
