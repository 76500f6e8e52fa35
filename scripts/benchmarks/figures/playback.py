"""CPU time per minute of real-time playback: Longform's side, `longform play` to the null or
PulseAudio route, its whole CPU time read from a control group it starts in (mpd's side is in
`peers/mpd.py`; the bench's `main` alternates the runs and takes the medians)."""
import os, subprocess
from ..common import AUDIO, LONGFORM, CPUGroup, measure_process


def longform_playback(items, route, seconds, env):
    group = CPUGroup("longform")
    process = subprocess.Popen([LONGFORM, "play", "--route", route, "--state", os.path.join(os.path.dirname(AUDIO), "bench-state")] + items, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=group.join)
    try:
        return measure_process(process, seconds, group)
    finally:
        process.kill()
        process.wait()
        group.remove()
