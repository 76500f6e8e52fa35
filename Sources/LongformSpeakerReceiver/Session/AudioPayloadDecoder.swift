import LongformSources
import LongformSpeakerProtocol

/// Turns an audio message's payload into interleaved Float32 frames in the stream's format: PCM
/// sample by sample, FLAC block by block (each decodes on its own). A payload that does not hold
/// the frames it says is refused with the reason, and the next one decodes as before. Used by one
/// thread at a time (the connection on its event loop, or the session under its lock): the FLAC
/// decoder it keeps is not thread-safe.
public final class AudioPayloadDecoder: @unchecked Sendable {
    /// The FLAC decoder, made for the format of the first FLAC block and again when it changes.
    private var flac: (format: AudioStreamFormat, decoder: FLACBlockDecoder)?
    private var scratch: [Int16] = []

    /// A decoder holding no codec yet.
    public init() {}

    /// `payload`'s `frameCount` frames as Float32, in `format` (nil: no format yet, refused).
    public func decode(frameCount: UInt32, payload: [UInt8], format: AudioStreamFormat?) -> Result<[Float], SpeakerSession.AudioRefusal> {
        guard let format else { return .failure(.init(reason: "audio before a format")) }
        guard format.encoding.isCompressed else {
            guard payload.count == Int(frameCount) * format.bytesPerFrame else {
                return .failure(.init(reason: "audio of \(frameCount) frames carries \(payload.count) bytes, not \(Int(frameCount) * format.bytesPerFrame)"))
            }
            return .success(format.encoding.decode(payload))
        }
        do {
            let decoder = try flacDecoder(for: format)
            let sampleCount = Int(frameCount) * Int(format.channelCount)
            if scratch.count != sampleCount { scratch = [Int16](repeating: 0, count: sampleCount) }
            try scratch.withUnsafeMutableBufferPointer { samples throws(FLACCodecError) in try decoder.decode(payload, into: samples) }
            return .success(scratch.map(AudioStreamFormat.Encoding.floatSample))
        } catch {
            return .failure(.init(reason: "audio of \(frameCount) frames: \(error)"))
        }
    }

    private func flacDecoder(for format: AudioStreamFormat) throws(FLACCodecError) -> FLACBlockDecoder {
        if let flac, flac.format == format { return flac.decoder }
        let decoder = try FLACBlockDecoder(sampleRate: Int(format.sampleRate), channelCount: Int(format.channelCount))
        flac = (format, decoder)
        return decoder
    }
}
