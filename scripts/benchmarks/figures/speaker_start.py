"""Speakers in step from the first frame: three `longform speaker` processes, each playing to a
remap sink of one 6-channel PulseAudio null sink (so that all three rooms are heard on one sample
clock), fed by `longform play` on a `speaker:` route. Each start is a new user's: the speakers and
the sender start afresh, and the monitor is recorded from before the first frame. Each room's
offset against the first, per 100 ms window from the first audible frame, is the peak of their
whitened cross-correlation, refined to a fraction of a sample; the correlation at that offset says
whether the audio is the same (shifted) or not (stretched, or another part of the music)."""
import os, statistics, subprocess, time
from .. import common
from ..common import LONGFORM, speaker_sender, start_pulse, start_speaker, sync_music, sync_pcm, percentile
from ..peers.snapcast import start_snapserver, start_snapclient

ROOM_SINK = "rooms"
ROOM_NAMES = ["a", "b", "c"]
# Aux channels: PulseAudio neither upmixes nor downmixes them, so each room's pair lands as it is.
ROOM_CHANNELS = ",".join(f"aux{index}" for index in range(2 * len(ROOM_NAMES)))
RATE = 44100
WINDOW = RATE // 10     # 100 ms windows: a start that is off for its first seconds shows in many
REACH = RATE // 5       # lags up to 200 ms either way: a room that started 80 ms off is measured, not aliased
MATCHED = 0.9           # a window whose best correlation is below this is unmatched: no offset is read from it
AUDIBLE = 100           # a sample above this (16-bit) is sound; a window quieter than 50 rms is silence
JUMP_US = 50            # a change of offset between two windows beyond this is a skip or a repeat
SETTLING_WINDOWS = 50   # the first 5 s: rooms on skewed clocks have until then to come within 100 µs
EDGE_FRAMES = 2         # rooms that start or stop sounding this close together (45 µs) do so together
SHARED_SILENCE = "shared silence"  # a window both rooms are silent in a part of, together: not measured


def room_modules():
    """The 6-channel null sink and a stereo remap sink per room on two of its channels."""
    modules = [f"module-null-sink sink_name={ROOM_SINK} rate={RATE} channels={2 * len(ROOM_NAMES)} channel_map={ROOM_CHANNELS}"]
    for index, name in enumerate(ROOM_NAMES):
        modules.append(f"module-remap-sink sink_name=room-{name} master={ROOM_SINK} channels=2 remix=no "
                       f"master_channel_map=aux{2 * index},aux{2 * index + 1} channel_map=front-left,front-right")
    return modules


def read_rooms(path):
    """Each room's left channel from a raw recording of the rooms' monitor (float arrays)."""
    import numpy
    raw = open(path, "rb").read()
    frame_bytes = 2 * 2 * len(ROOM_NAMES)
    # parec is killed mid-write: the last frame may be cut short.
    raw = raw[:len(raw) - len(raw) % frame_bytes]
    samples = numpy.frombuffer(raw, dtype="<i2").astype(numpy.float64).reshape(-1, 2 * len(ROOM_NAMES))
    return [samples[:, 2 * index] for index in range(len(ROOM_NAMES))]


def is_sound(samples):
    """Whether `samples` are sound (rms over 50), not silence."""
    import numpy
    return bool(numpy.std(samples) >= 50)


def is_audible(room, begin):
    """Whether a room plays in the window from `begin`."""
    return is_sound(room[begin:begin + WINDOW])


def audible_quarters(room, begin):
    """Whether each quarter of the window from `begin` is sound."""
    quarter = WINDOW // 4
    return tuple(is_sound(room[begin + index * quarter:begin + (index + 1) * quarter]) for index in range(4))


def edges_agree(reference, other, quarters):
    """Whether two rooms, silent in the same quarters of a window (`reference` and `other` its
    samples), start and stop sounding within `EDGE_FRAMES` of each other there."""
    import numpy
    loud = [numpy.nonzero(numpy.abs(samples) > AUDIBLE)[0] for samples in (reference, other)]
    if any(len(frames) == 0 for frames in loud):
        return False
    starts, stops = [frames[0] for frames in loud], [frames[-1] for frames in loud]
    return (quarters[0] or abs(starts[0] - starts[1]) <= EDGE_FRAMES) and (quarters[-1] or abs(stops[0] - stops[1]) <= EDGE_FRAMES)


def window_row(rooms, begin):
    """Each other room's offset against room a in the window from `begin` (µs, positive: later)
    and the normalised correlation at that lag; None where either room is silent, or silent in a
    part of it where the other plays; `SHARED_SILENCE` where both are silent in the same part and
    start or stop sounding together (a start, a pause, a resume: the correlation of a window
    mostly silent peaks anywhere, as far as the search reaches)."""
    import numpy
    reference = rooms[0][begin:begin + WINDOW]
    row = []
    for other in rooms[1:]:
        segment = other[begin - REACH:begin + WINDOW + REACH]
        if not is_audible(rooms[0], begin) or not is_audible(other, begin):
            row.append(None)
            continue
        quarters, other_quarters = audible_quarters(rooms[0], begin), audible_quarters(other, begin)
        if not all(quarters) or not all(other_quarters):
            same = quarters == other_quarters and edges_agree(reference, other[begin:begin + WINDOW], quarters)
            row.append(SHARED_SILENCE if same else None)
            continue
        # Whitened (GCC-PHAT): the music's chords repeat every 36 ms, and a plain correlation
        # peaks nearly as high a half-period off; with every frequency weighed alike the
        # noise in the music decides.
        size = 1 << (len(segment) + len(reference)).bit_length()
        cross = numpy.fft.rfft(segment, size) * numpy.conj(numpy.fft.rfft(reference, size))
        correlation = numpy.fft.irfft(cross / numpy.maximum(numpy.abs(cross), 1e-9), size)[:2 * REACH + 1]
        # A lag at either end of the search is not a peak (the correlation rises past it), and a
        # track whose chords repeat every 18.2 ms repeats them 11 times in 200 ms: its windows
        # now and then peaked there, at the edge. The highest peak inside.
        peak = 1 + int(numpy.argmax(correlation[1:-1]))
        y0, y1, y2 = correlation[peak - 1], correlation[peak], correlation[peak + 1]
        curvature = y0 - 2 * y1 + y2
        fraction = 0.5 * (y0 - y2) / curvature if curvature else 0.0
        # The other room moved back by the whole lag and by a fraction (a phase ramp), the
        # fraction refined to the best correlation: an exact copy then correlates at 1 whatever
        # its offset, a stretched one does not.
        spectrum, frequencies = numpy.fft.rfft(segment), numpy.fft.rfftfreq(len(segment))
        reference_energy = numpy.dot(reference, reference)

        def aligned(shift):
            moved = numpy.fft.irfft(spectrum * numpy.exp(2j * numpy.pi * frequencies * shift), len(segment))[peak:peak + WINDOW]
            norm = numpy.sqrt(reference_energy * numpy.dot(moved, moved))
            return float(numpy.dot(reference, moved) / norm) if norm else 0.0
        low, high = fraction - 0.5, fraction + 0.5
        for _ in range(24):
            third = (high - low) / 3
            if aligned(low + third) < aligned(high - third):
                low += third
            else:
                high -= third
        fraction = (low + high) / 2
        row.append((float((peak + fraction - REACH) / RATE * 1e6), aligned(fraction)))
    return row


def room_offsets(path):
    """Per 100 ms window from the first audible frame of any room: `window_row`; and the frame
    the first sound came at."""
    import numpy
    rooms = read_rooms(path)
    loud = numpy.nonzero(numpy.max(numpy.abs(numpy.stack(rooms, axis=1)), axis=1) > AUDIBLE)[0]
    if len(loud) == 0:
        return [], None
    first = int(loud[0])
    return [window_row(rooms, begin) for begin in range(max(first, REACH), len(rooms[0]) - WINDOW - REACH, WINDOW)], first


def start_figures(windows, trims_end=True):
    """One start's figures: the worst |offset| between any two rooms, its median, the skips and
    repeats (offset jumps between windows), the worst correlation, the windows where a room was
    silent while another played (a late room) and those where a room matched no other (below
    `MATCHED`: stretched, or further off than the search reaches). With `trims_end`, windows at
    the end with a room silent are left out (the bench stopped the rooms one after the other).
    `worst_window` is the index in `windows` (100 ms each from the first sound) of the worst one;
    `after_5s_worst_us`, `after_5s_jumps` and `after_5s_worst_correlation` are those of the
    windows after the first 5 s (the skewed rooms' goals)."""
    offsets, offset_windows, correlations, jump_windows, silent, unmatched = [], [], [], [], 0, 0
    correlation_windows = []
    previous = None
    while trims_end and windows and any(value is None for value in windows[-1]):
        windows = windows[:-1]
    for index, row in enumerate(windows):
        if any(value is None for value in row):
            silent += 1
            previous = None
            continue
        if any(value == SHARED_SILENCE for value in row):
            previous = None
            continue
        correlations.append(min(value[1] for value in row))
        correlation_windows.append(index)
        if correlations[-1] < MATCHED:
            unmatched += 1
            previous = None
            continue
        pair = [value[0] for value in row]
        # Between any two rooms: each against a, and b against c.
        spread = max(abs(pair[0]), abs(pair[1]), abs(pair[0] - pair[1]))
        offsets.append(spread)
        offset_windows.append(index)
        if previous is not None and max(abs(now - before) for now, before in zip(pair, previous)) > JUMP_US:
            jump_windows.append(index)
        previous = pair
    later = [offset for offset, index in zip(offsets, offset_windows) if index >= SETTLING_WINDOWS]
    later_correlations = [value for value, index in zip(correlations, correlation_windows) if index >= SETTLING_WINDOWS]
    return {"windows": len(offsets), "silent_windows": silent, "unmatched_windows": unmatched,
            "worst_us": round(max(offsets), 1) if offsets else None,
            "median_us": round(statistics.median(offsets), 1) if offsets else None,
            "jumps": len(jump_windows), "worst_correlation": round(min(correlations), 6) if correlations else None,
            "first_second_worst_us": round(max(offsets[:10]), 1) if offsets else None,
            "worst_window": offset_windows[offsets.index(max(offsets))] if offsets else None,
            "after_5s_worst_us": round(max(later), 1) if later else None,
            "after_5s_jumps": sum(index >= SETTLING_WINDOWS for index in jump_windows),
            "worst_correlation_window": correlation_windows[correlations.index(min(correlations))] if correlations else None,
            "after_5s_worst_correlation": round(min(later_correlations), 6) if later_correlations else None}


class RoomRecording:
    """parec on the rooms' monitor into `path` (raw 16-bit, every room's pair), with a short
    latency, so that the file's size tells the frame a moment of the bench falls on."""

    def __init__(self, address, path):
        self.path = path
        self.process = subprocess.Popen(["parec", "--server", address, "-d", f"{ROOM_SINK}.monitor", "--raw", "--format=s16le",
                                         f"--rate={RATE}", f"--channels={2 * len(ROOM_NAMES)}", f"--channel-map={ROOM_CHANNELS}",
                                         "--latency-msec=20", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def frame(self):
        return os.path.getsize(self.path) // (2 * 2 * len(ROOM_NAMES)) if os.path.exists(self.path) else 0

    def stop(self):
        self.process.kill()
        self.process.wait()


def busy_processes(count):
    """`count` busy processes (`yes > /dev/null`), given half a second to take the cores; the
    caller kills them."""
    processes = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(count)]
    time.sleep(0.5)
    return processes


def longform_start(work, env, address, music, index, seconds, skews, jitter_ms=0.0, cut=None, load=0, rate_mbit=None):
    """One start: three speakers (each room's clock `skews` ppm fast) and a sender afresh, the
    rooms' monitor recorded from before it; with `jitter_ms`, `rate_mbit` or `cut`, the sender in a
    namespace of its own behind `scripts/impair` (its link at `rate_mbit` each way if given), and
    with `cut` (seconds in, seconds long) the link to it cut
    for a while; `load` busy processes (`yes > /dev/null`) run from before the speakers start to the
    end. Returns the recording's path and the recording's frames at the cut and at the
    link's return (None without a cut)."""
    recording = RoomRecording(address, os.path.join(work, f"start-{index:02d}.raw"))
    processes = []
    impaired = None
    moments = None
    try:
        processes += busy_processes(load)
        ports = []
        for name, skew in zip(ROOM_NAMES, skews):
            # A new user's speakers (a state of their own), or with `--start-state kept` the room's from the start before.
            state = os.path.join(work, f"start-room-state-{name}") if common.START_STATE_KEPT else None
            process, port = start_speaker(work, env, f"start-{index:02d}-{name}", f"pulse:room-{name}", [f"--clock-skew={skew:g}"], state=state)
            processes.append(process)
            ports.append(port)
        sender_log = os.path.join(work, f"start-{index:02d}-sender.log")
        command, sender_env, impaired = speaker_sender([LONGFORM, "play", "--state", os.path.join(work, f"start-state-{index:02d}"), music],
                                                       env, ports, jitter_ms, is_impaired=cut is not None, rate_mbit=rate_mbit)
        processes.append(subprocess.Popen(command, env=sender_env, stdout=open(sender_log, "w"), stderr=subprocess.STDOUT))
        if cut is None:
            time.sleep(seconds)
        else:
            at, length = cut
            time.sleep(at)
            moments = (recording.frame(), None)
            impaired.host.cut()
            time.sleep(length)
            moments = (moments[0], recording.frame())
            impaired.host.restore()
            time.sleep(seconds - at - length)
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()
        if impaired is not None:
            impaired.close()
        if impaired is not None and moments is not None and moments[1] is None:
            impaired.host.restore()
        recording.stop()
    return recording.path, moments


def snapcast_start(work, env, address, pcm, index, seconds, load=0):
    """One start of Snapcast's: snapserver with the same music (its file source, which plays from
    the server's start) and three snapclients, one per room, started together afresh, the rooms'
    monitor recorded from before; `load` busy processes as for ours. Returns the recording's path."""
    recording = RoomRecording(address, os.path.join(work, f"snapcast-start-{index:02d}.raw"))
    processes = []
    try:
        processes += busy_processes(load)
        server, port = start_snapserver(work, f"snapserver-start-{index:02d}", f"file://{pcm}?name=music&sampleformat=44100:16:2")
        processes.append(server)
        for name in ROOM_NAMES:
            processes.append(start_snapclient(port, f"start-{index:02d}-{name}", f"room-{name}", env))
        time.sleep(seconds)
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()
        recording.stop()
    return recording.path


def start_cut_figures(windows, first, moments):
    """A start's figures around a cut of the link (`moments`: the recording's frames at the cut
    and at the link's return; `first`: the first sound's): the windows with a room silent from the
    cut to the end (a gap), the worst window during the cut, the worst from 5 s after the link
    returned, and how long after it returned the rooms were last more than 100 µs apart."""
    cut, restore = ((frame - first) // WINDOW for frame in moments)
    def spread(row):
        if any(value is None or value == SHARED_SILENCE for value in row) or min(value[1] for value in row) < MATCHED:
            return None
        pair = [value[0] for value in row]
        return max(abs(pair[0]), abs(pair[1]), abs(pair[0] - pair[1]))
    spreads = [spread(row) for row in windows]
    during = [value for value in spreads[cut:restore] if value is not None]
    settled = [value for value in spreads[restore + SETTLING_WINDOWS:] if value is not None]
    apart = [index for index, value in enumerate(spreads) if index >= restore and value is not None and value > 100]
    return {"cut_silent_windows": sum(any(value is None for value in row) for row in windows[cut:]),
            "cut_worst_us": round(max(during), 1) if during else None,
            "after_return_5s_worst_us": round(max(settled), 1) if settled else None,
            "in_step_after_return_s": round((apart[-1] + 1 - restore) / 10, 1) if apart else 0.0}


def starts_summary(runs):
    """Over the starts' figures: the worst window, its median and p90 across starts, the starts over
    100 µs, the jumps (and after 5 s), the worst correlation, the silent and unmatched windows."""
    measured = [run for run in runs if run["worst_us"] is not None]
    worst = sorted(run["worst_us"] for run in measured)
    return {"runs": runs,
              "worst_us": worst[-1] if worst else None,
              "median_of_worst_us": round(statistics.median(worst), 1) if worst else None,
              "p90_of_worst_us": round(percentile(worst, 0.9), 1) if worst else None,
              "starts_over_100_us": sum(value > 100 for value in worst),
              "jumps": sum(run["jumps"] for run in runs),
              "after_5s_worst_us": max((run["after_5s_worst_us"] for run in measured if run["after_5s_worst_us"] is not None), default=None),
              "after_5s_jumps": sum(run["after_5s_jumps"] for run in runs),
              "worst_correlation": min((run["worst_correlation"] for run in measured), default=None),
              "after_5s_worst_correlation": min((run["after_5s_worst_correlation"] for run in measured if run["after_5s_worst_correlation"] is not None), default=None),
              "silent_windows": sum(run["silent_windows"] for run in runs),
              "unmatched_windows": sum(run["unmatched_windows"] for run in runs)}


def speaker_start(items, work, starts=20, seconds=10, skews=(0, 0, 0), jitter_ms=0.0, cut=None, load=0, rate_mbit=None):
    """`starts` cold starts of three speakers, each measured from its first audible frame; each
    room's clock runs `skews` ppm fast (as though on crystals of their own), and with `jitter_ms`
    (or `rate_mbit`: the link's rate) the sender reaches them through `scripts/impair`; with `cut`
    (seconds in, seconds long), the link to the sender is cut once in each start; `load` busy
    processes share the cores throughout. Then, without skews, jitter, a rate or a cut, as many
    starts of Snapcast's three clients."""
    if cut is not None and seconds < cut[0] + cut[1] + 10:
        raise ValueError(f"a start of {seconds} s is too short for a cut at {cut[0]:g} s of {cut[1]:g} s and 10 s after it")
    music = sync_music(items, work, seconds + 10)
    server, address = start_pulse(work, (), room_modules())  # no stereo null sink: the rooms' modules only
    env = dict(os.environ, PULSE_SERVER=address)
    runs, peer_runs = [], []
    try:
        for index in range(starts):
            path, moments = longform_start(work, env, address, music, index, seconds, skews, jitter_ms, cut, load, rate_mbit)
            windows, first = room_offsets(path)
            figures = start_figures(windows)
            if moments is not None and first is not None:
                figures.update(start_cut_figures(windows, first, moments))
                print(f"speakers, start {index + 1}: link cut at {cut[0]:g} s for {cut[1]:g} s: {figures['cut_silent_windows']} windows with a room silent from the cut on, "
                      f"worst {figures['cut_worst_us']} µs during it, {figures['after_return_5s_worst_us']} µs from 5 s after the link returned; "
                      f"rooms last over 100 µs apart {figures['in_step_after_return_s']} s after it returned", flush=True)
            os.remove(path)
            runs.append(figures)
            describe_start("speakers", index, starts, figures)
        # Snapcast's three clients where they can run as ours did: on one clock, no relay, no cut.
        if not any(skews) and not jitter_ms and cut is None and not rate_mbit:
            pcm = sync_pcm(items, work, seconds + 10)
            for index in range(starts):
                path = snapcast_start(work, env, address, pcm, index, seconds, load)
                figures = start_figures(room_offsets(path)[0])
                os.remove(path)
                peer_runs.append(figures)
                describe_start("Snapcast", index, starts, figures)
    finally:
        server.kill()
        server.wait()
    result = dict(starts_summary(runs), starts=starts, seconds=seconds, skews_ppm=list(skews), jitter_ms=jitter_ms, cut=list(cut) if cut else None, load=load,
                  rate_mbit=rate_mbit, codec=common.SPEAKER_CODEC, state="kept" if common.START_STATE_KEPT else "fresh")
    conditions = (f"clocks {', '.join(f'{skew:+g}' for skew in skews)} ppm, {jitter_ms:g} ms of jitter, {load} busy processes"
                  + (f", a {rate_mbit:g} Mbit/s link" if rate_mbit else "") + (f", {common.SPEAKER_CODEC}" if common.SPEAKER_CODEC else ""))
    kept = ", each room's state kept from the start before" if common.START_STATE_KEPT else ""
    print(f"speakers from the first frame, {starts} starts of three rooms ({conditions}{kept}): {describe_starts(result)} "
          f"(goal: every window within 100 µs, no jump, correlation ≥ 0.9999)", flush=True)
    if peer_runs:
        peer = starts_summary(peer_runs)
        result["snapcast"] = peer
        result["snapcast/longform_median_of_worst"] = round(peer["median_of_worst_us"] / result["median_of_worst_us"], 2) \
            if peer["median_of_worst_us"] and result["median_of_worst_us"] else None
        print(f"Snapcast's three clients from the first frame, {starts} starts ({conditions}): {describe_starts(peer)}; "
              f"snapcast/longform (median of each start's worst) {result['snapcast/longform_median_of_worst']}", flush=True)
    return result


def describe_start(who, index, starts, figures):
    """Prints one start's figures."""
    print(f"{who}, start {index + 1} of {starts}: {figures['windows']} matched windows of 100 ms "
          f"({figures['silent_windows']} with a room silent, {figures['unmatched_windows']} unmatched); worst {figures['worst_us']} µs (window {figures['worst_window']}), first second's worst "
          f"{figures['first_second_worst_us']} µs, after 5 s {figures['after_5s_worst_us']} µs, median {figures['median_us']} µs, "
          f"{figures['jumps']} jumps ({figures['after_5s_jumps']} after 5 s), worst correlation {figures['worst_correlation']} "
          f"(window {figures['worst_correlation_window']}; after 5 s {figures['after_5s_worst_correlation']})", flush=True)


def describe_starts(result):
    """The summary of `starts_summary` in words."""
    return (f"each start's worst window median {result['median_of_worst_us']} µs, "
            f"p90 {result['p90_of_worst_us']} µs, worst {result['worst_us']} µs (after 5 s {result['after_5s_worst_us']} µs, {result['after_5s_jumps']} jumps); {result['starts_over_100_us']} starts over 100 µs, "
            f"{result['jumps']} jumps, {result['unmatched_windows']} windows unmatched, {result['silent_windows']} with a room silent, worst correlation {result['worst_correlation']} "
            f"(after 5 s {result['after_5s_worst_correlation']})")
