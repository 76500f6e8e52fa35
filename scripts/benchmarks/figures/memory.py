"""Peak memory with 5 minutes of look-ahead enqueued: `longform play` on the null route with a
300 s look-ahead, its peak RSS against twice the PCM size of 5 minutes (no peer program)."""
import os, subprocess, time
from ..common import AUDIO, LONGFORM, peak_memory_kib


def lookahead_memory(items):
    # Long enough to hold 5 minutes ahead: the playlist repeated.
    process = subprocess.Popen([LONGFORM, "play", "--route", "null", "--lookahead", "300", "--state", os.path.join(os.path.dirname(AUDIO), "bench-state")] + items,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(15)  # decoding 5 minutes ahead takes a few seconds
        peak = peak_memory_kib(process.pid) * 1024
    finally:
        process.kill()
        process.wait()
    pcm = 300 * 44100 * 2 * 4
    return {"peak_bytes": peak, "pcm_bytes": pcm, "ratio_to_pcm": round(peak / pcm, 2), "goal": "<= 2.0"}
