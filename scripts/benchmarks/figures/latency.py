"""Command latency: Longform's side, `longform-latency` timing play from stopped, next, seek and
remove the current item to the first sample of their effect out of the route, and the figures of
each command for either player: the median time and the trials whose recording lacks the effect's
first frames (mpd's side is in `peers/mpd.py`; the bench's `main` puts the two together)."""
import json, subprocess
from ..common import LATENCY, latency_items, median


# --- Command latency -------------------------------------------------------------------------

def longform_latency(route, trials, env):
    reply = subprocess.run([LATENCY, route] + latency_items() + [str(trials)], env=env, capture_output=True, text=True, check=True)
    return json.loads(reply.stdout.strip().splitlines()[-1])


def latency_figures(milliseconds, skipped):
    """One player's figures for one command: the median time to the first frame of the effect that
    comes out ("first_sound_ms"), and, for each trial whose first frame out was not the effect's
    first, how many of the effect's first frames the recording lacks ("missing_frames"). On
    PulseAudio that is not all lost: a sink that rewinds plays the frames it renders again, but its
    monitor never hands a rewound stretch to a recorder (up to a block, 219 frames with a 5 ms
    recorder); more than a block missing is lost."""
    return {"first_sound_ms": median(milliseconds), "trials": len(milliseconds), "trials_ms": milliseconds,
            "missing_frames": [int(lost) for lost in skipped if lost]}


def describe_latency(figures):
    missing = figures["missing_frames"]
    lacks = (f", {len(missing)} of {figures['trials']} trials lack the effect's first {min(missing)}-{max(missing)} frames"
             if missing else f", every one of {figures['trials']} trials has the effect's first frame")
    return f"{figures['first_sound_ms']} ms{lacks}"
