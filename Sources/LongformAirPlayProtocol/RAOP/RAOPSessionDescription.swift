/// The SDP an `ANNOUNCE` carries: one ALAC stream of 352-frame packets, 16-bit stereo, unencrypted.
public enum RAOPSessionDescription {
    /// The frames in one audio packet (the ALAC cookie's frameLength).
    public static let framesPerPacket = 352

    /// The SDP for a session `sessionID` from `localAddress` to `remoteAddress` at `sampleRate`.
    /// The `fmtp` line is the ALAC magic cookie: frameLength 352, version 0, 16 bits, pb 40,
    /// mb 10, kb 14, 2 channels, maxRun 255, maxFrameBytes 0, avgBitRate 0, the rate.
    public static func alac(sessionID: UInt32, localAddress: String, remoteAddress: String, sampleRate: Int = 44_100) -> String {
        let family = localAddress.contains(":") ? "IP6" : "IP4"
        let remoteFamily = remoteAddress.contains(":") ? "IP6" : "IP4"
        return [
            "v=0",
            "o=iTunes \(sessionID) 0 IN \(family) \(localAddress)",
            "s=iTunes",
            "c=IN \(remoteFamily) \(remoteAddress)",
            "t=0 0",
            "m=audio 0 RTP/AVP 96",
            "a=rtpmap:96 AppleLossless",
            "a=fmtp:96 \(framesPerPacket) 0 16 40 10 14 2 255 0 0 \(sampleRate)",
        ].map { $0 + "\r\n" }.joined()
    }
}
