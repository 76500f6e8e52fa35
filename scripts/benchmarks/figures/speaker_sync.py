"""Speakers' sync: two `longform speaker` processes as a stereo pair into one PulseAudio null sink,
fed by `longform play` on a `speaker:` route, on loopback or with the sender behind `scripts/impair`
in a network namespace; the sink's monitor is recorded and the channels cross-correlated second by
second, beside Snapcast's pair on the same sink and music (`peers/snapcast.py`)."""
import os, re, subprocess, time
from ..common import (
    LONGFORM, cpu_seconds, peak_memory_kib, start_pulse, start_speaker, speaker_sender, sync_music,
    pair_offsets, offset_figures, describe_offsets, Recording, FILL_LINE)
from ..peers.snapcast import snapcast_sync


def longform_sync(items, work, seconds, jitter_ms):
    """Two speakers as a stereo pair into one null sink, the sender on loopback (no jitter) or,
    with `jitter_ms`, in a namespace of its own behind `scripts/impair` (each leg of every clock
    exchange and every TCP chunk held jitter ± jitter ms)."""
    server, address = start_pulse(work)
    env = dict(os.environ, PULSE_SERVER=address)
    speakers = []
    sender = impaired = None
    try:
        ports = []
        for channel in ["left", "right"]:
            process, port = start_speaker(work, env, f"{channel}-{jitter_ms:g}ms", "pulse:bench", ["--channel", channel, "--buffer", str(seconds + 90)])
            speakers.append(process)
            ports.append(port)
        music = sync_music(items, work, seconds)
        recording = Recording(address, work, f"sync-longform-{jitter_ms:g}ms", latency_msec=None)
        command, sender_env, impaired = speaker_sender(
            [LONGFORM, "play", "--lookahead", str(seconds + 20), "--state", os.path.join(work, f"sync-state-{jitter_ms:g}"), music], env, ports, jitter_ms)
        # The engine's speaker route sends the whole piece ahead (the look-ahead covers it).
        sender_log = os.path.join(work, f"sync-sender-{jitter_ms:g}ms.log")
        sender = subprocess.Popen(command, env=sender_env, stdout=open(sender_log, "w"), stderr=subprocess.STDOUT)
        cpu_before = [cpu_seconds(process.pid) for process in speakers]
        time.sleep(20)
        # What a speaker holding the piece costs: its memory once filled, its CPU per minute of playing.
        speaker_rss = [peak_memory_kib(process.pid) for process in speakers]
        time.sleep(max(0, seconds - 20 + 2))
        cpu_after = [cpu_seconds(process.pid) for process in speakers]
        recording.stop()
    finally:
        if sender is not None:
            sender.terminate()
            sender.wait()
        if impaired is not None:
            impaired.close()
        for process in speakers:
            process.kill()
            process.wait()
        server.kill()
        server.wait()
    fills = [float(rate) for _, rate in re.findall(FILL_LINE, open(sender_log).read())]
    result = offset_figures(pair_offsets(recording.path))
    result.update({"seconds": seconds, "jitter_ms": jitter_ms, "fill_rate_x_real_time": min(fills) if fills else None,
                   "speaker_peak_rss_mib": round(max(speaker_rss) / 1024, 1),
                   "speaker_cpu_seconds_per_minute": round(max(after - before for before, after in zip(cpu_before, cpu_after)) / (seconds / 60), 2)})
    print(f"speakers, {jitter_ms:g} ms of jitter: a stereo pair on one PulseAudio sink, {describe_offsets(result)} "
          f"(goal: median within 23 µs, p99 within 100 µs)", flush=True)
    print(f"speakers, {jitter_ms:g} ms of jitter: filled at {result['fill_rate_x_real_time']}× real time (goal over 100×); a speaker holding "
          f"{seconds + 10} s of audio (its buffer {seconds + 90} s): "
          f"{result['speaker_peak_rss_mib']} MiB, {result['speaker_cpu_seconds_per_minute']} CPU s per minute of playing", flush=True)
    return result


def speaker_sync(items, work, seconds, jitters):
    """Our stereo pair with each jitter, then Snapcast's on loopback, over `seconds` of music each."""
    results = {f"longform_{jitter:g}ms_jitter": longform_sync(items, work, seconds, jitter) for jitter in jitters}
    results["snapcast"] = snapcast_sync(items, work, seconds)
    return results
