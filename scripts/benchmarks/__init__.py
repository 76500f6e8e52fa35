"""Longform's benchmarks, each beside a peer measured in the same run, with the ratio.

1. Render throughput: ~20 minutes of music (FLAC, MP3, AAC) rendered to a float WAV, against
   ffmpeg decoding and concatenating the same files to the same WAV.
2. CPU time per minute of real-time playback to the null and PulseAudio routes, against mpd
   playing the same files to its null and PulseAudio outputs: each program's whole CPU time in
   nanoseconds from a control group it starts in, the median of alternating runs.
3. Peak memory with 5 minutes of look-ahead enqueued, against twice the PCM size of 5 minutes.
4. Command latency: the time from a command (play from stopped, next, seek, remove the current
   item) to the first sample of its effect coming out of the route, on the null and PulseAudio
   routes, against mpd's fifo (paced like its null output, but observable) and PulseAudio outputs;
   and the trials whose recording lacks the effect's first frames (the items number their frames).
5. `longform serve`: the time from a playlist edit to its event reaching each of 100 event-stream
   clients, and the latency of playlist edits sent at 100 per second, alone and with the 100
   clients connected (each edit then goes out to all of them), against mpd's `idle` clients and
   its `addid`/`deleteid` on the same files.

6. Speakers: two `longform speaker` processes, a stereo pair (one plays the left channel, one the
   right) into one PulseAudio null sink, fed by `longform play` on a `speaker:` route; the sink's
   monitor is recorded and the channels cross-correlated second by second: the offset between the
   speakers as a listener would hear it, not as they report it. Once on loopback, once more for
   each jitter of `--jitter` with the sender in a network namespace behind `scripts/impair`; then
   Snapcast's pair (snapserver and two snapclients, each on one channel through a mono remap sink)
   on the same sink and music.
7. Speakers from the first frame: three `longform speaker` processes, each on a remap sink of one
   6-channel PulseAudio null sink (one sample clock for all three rooms), started afresh with
   their sender `--starts` times (20); the monitor is recorded from before the first frame and
   each room's offset against the others taken per 100 ms window from the first audible frame
   (cross-correlation peak, refined to a fraction of a sample), with the correlation at that
   offset (an exact copy correlates at 1; a stretched one does not). Per start: the worst window,
   the jumps between windows (skips or repeats), the windows where a room was silent while
   another played, and the worst window and jumps after the first 5 s. With `--skews` each room's
   clock runs that many ppm fast; with `--start-jitter` (or `--start-rate`, the link's Mbit/s) the
   sender runs in a network namespace behind `scripts/impair`; with `--start-state kept` each
   room's speaker keeps its state (its device's rate) from the start before. Then, without skews, jitter, a rate
   or a cut, as many starts of Snapcast's
   three clients on the same rooms (snapserver's file source with the same music, the clients
   started with it), measured the same way.
7b. Speakers after what a listener does: the same three rooms fed by `longform serve` playing the
   ten tracks; `--events` rounds (20) of a seek, a skip, an edit (the item playing removed), a
   pause and resume, and a join (one room's speaker stopped and started again on its port, with
   its state, so that it starts at its device's rate as last measured), in
   one recording. The windows of the 5 s after each event are measured as a start's; against
   Snapcast's three clients on the same rooms (mpd's fifo into snapserver), through the same
   events over mpd's protocol (a join restarts a snapclient).
8. Speakers' command latency: `longform serve` on a `speaker:` route to three `longform speaker`
   processes, each playing to a null sink of its own (a room), against Snapcast (mpd's fifo output
   into snapserver's pipe source, three snapclients on the same sinks): the time from pause, play
   and skip to their effect heard in all three rooms (each sink's monitor recorded by parec).
   With `--latency-rate MBIT` each sender (serve; snapserver) runs in a network namespace behind
   `scripts/impair --rate`, its speakers (clients) here, so that each command queues behind the
   fill on the link (a play from the start and a skip send the look-ahead again); the link's load
   over the half second before each command is reported beside it.

9. Speakers' longest cut: one `longform speaker` here, its sender in a network namespace; once
   the route's look-ahead (`--cut-lookahead`, default 180 s) is sent, the veth link is cut for that
   long and 20 s more, then restored for 30 s. The speaker's sink is recorded: the seconds it played on
   before its first gap, and how soon after the restore it sounded again; against a snapclient
   whose snapserver is in the namespace, cut for 20 s.
10. Speakers one sender feeds: `longform play` on a `speaker:` route to 1, 4, 16, 64 speakers
   (`--fan-out`), each writing what it plays to a WAV file in real time: the fill of the whole
   group, the sender's CPU per minute of playing (over 30 s) and its memory, the speakers' CPU, and how many
   played without a gap (a count with a gap ends the climb); against snapserver feeding as many
   snapclients (each writing to a file).
11. Speakers on the wire (`--only speaker-wire`): `longform play` in a namespace behind
   `scripts/impair --rate` (`--wire-rate`, 50 Mbit/s) sends `--wire-seconds` (600) of the music
   ahead to one speaker, once per codec (float, pcm, flac): the bytes that crossed the link (its
   counters, headers included) against 16-bit PCM's, the fill's time, the speaker's resident
   memory holding it all and its CPU over its first and second minute (playing to a WAV file); against a snapclient
   of snapserver's FLAC writing to a file. `--speaker-codec` sends every other figure's speaker
   routes in that codec.

Usage: scripts/bench [--seconds N] [--cpu-runs N] [--trials N]
                     [--only playback|latency|server|speakers|speaker-start|speaker-events|speaker-latency|speaker-cut|speaker-fan-out|speaker-wire]
                     [--sync-seconds N] [--jitter MS[,MS...]] [--starts N] [--start-seconds N] [--skews PPM,PPM,PPM] [--start-jitter MS]
                     [--start-rate MBIT] [--start-state fresh|kept]
                     [--events N]
                     [--cut-lookahead S] [--fan-out N[,N...]] [--speaker-codec float|pcm|flac]
                     [--wire-seconds N] [--wire-rate MBIT] [--latency-rate MBIT]
"""
