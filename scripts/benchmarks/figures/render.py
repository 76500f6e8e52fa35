"""Render throughput: about 20 minutes of the test music (FLAC, MP3, AAC) rendered by
`longform render` to a float WAV, against ffmpeg decoding and concatenating the same files to the
same WAV (the best of three runs of each, wall and CPU seconds); ffmpeg's side is that one command,
so it has no module of its own under `peers/`."""
import os, subprocess, time
from ..common import LONGFORM, run


def timed(command):
    """Wall and CPU seconds of a command (children included)."""
    before = os.times()
    start = time.monotonic()
    run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def render_throughput(items, work):
    ours = os.path.join(work, "longform.wav")
    theirs = os.path.join(work, "ffmpeg.wav")
    longform = min(timed([LONGFORM, "render", "--sample-format", "f32", "-o", ours] + items) for _ in range(3))
    inputs = sum((["-i", item] for item in items), [])
    graph = "".join(f"[{n}:a]" for n in range(len(items))) + f"concat=n={len(items)}:v=0:a=1[out]"
    ffmpeg = min(timed(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + inputs +
                       ["-filter_complex", graph, "-map", "[out]", "-c:a", "pcm_f32le", theirs]) for _ in range(3))
    audio = os.path.getsize(ours) / (44100 * 2 * 4)
    return {"audio_seconds": round(audio, 1),
            "longform_wall": round(longform[0], 2), "longform_cpu": round(longform[1], 2),
            "ffmpeg_wall": round(ffmpeg[0], 2), "ffmpeg_cpu": round(ffmpeg[1], 2),
            "ratio_wall": round(ffmpeg[0] / longform[0], 2)}
