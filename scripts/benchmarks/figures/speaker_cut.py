"""Speakers' longest cut: one `longform speaker` here, its sender in a network namespace; once the
route's look-ahead is sent the link is cut for that long and 20 s more, then restored; the seconds
the speaker played on before its first gap and how soon it sounded again, beside a snapclient whose
snapserver is in the namespace (`peers/snapcast.py`)."""
import os, subprocess, time
from ..common import (
    speaker_route, LONGFORM, start_speaker, sync_music, Recording, FILL_LINE, AFTER_RESTORE_SECONDS, wait_for_log, CutRun)
from ..peers.snapcast import snapcast_cut


# --- Speakers: the longest cut survived ----------------------------------------------------

def longform_cut(items, work, lookahead):
    """One speaker here, its sender in the namespace: once the route's look-ahead is sent, the link
    is cut for that long and 20 s more, then restored; the speaker's sink is recorded throughout."""
    with CutRun(work) as trial:
        host = trial.host
        speaker, port = start_speaker(work, trial.env, "cut", "pulse:bench", ["--buffer", str(lookahead + 30)], address=host.address)
        trial.processes.append(speaker)
        trial.recording = Recording(trial.address, work, "cut-longform")
        log = os.path.join(work, "cut-sender.log")
        trial.processes.append(subprocess.Popen(host.wrapper + [LONGFORM, "play", "--lookahead", str(lookahead), "--state", os.path.join(work, "cut-state"),
                                                               "--route", speaker_route([f"{host.address}:{port}"]), sync_music(items, work, lookahead + 120)],
                                               stdout=open(log, "w"), stderr=subprocess.STDOUT))
        wait_for_log(log, FILL_LINE, "longform play", 60)
        time.sleep(5)
        trial.cut_link(lookahead + 20)
    return trial.figures()


def speaker_cut(items, work, lookahead):
    """The longest cut a speaker plays through without a gap: ours with the route's look-ahead,
    Snapcast's client with its own buffer."""
    results = {"longform": longform_cut(items, work, lookahead), "snapcast": snapcast_cut(items, work)}
    for name, figures in results.items():
        survived = figures["played_on_seconds"]
        print(f"speakers, a {figures['cut_seconds']} s cut: {name} played on "
              + (f"{survived} s before its first gap" if survived is not None else "through the whole cut without a gap")
              + (f", sound again {figures['sound_again_after_restore_seconds']} s after the link came back" if figures["sound_again_after_restore_seconds"] is not None
                 else f", no sound within {AFTER_RESTORE_SECONDS} s of the link coming back") + "; gaps before the cut "
              f"{figures['gaps_before_cut']}, after the recovery {figures['gaps_after_recovery']}", flush=True)
    mine, peer = results["longform"]["played_on_seconds"], results["snapcast"]["played_on_seconds"]
    results["longform/snapcast"] = round(mine / peer, 1) if mine and peer else None
    print(f"speakers, longest cut survived: longform {mine} s, snapcast {peer} s, longform/snapcast {results['longform/snapcast']}", flush=True)
    return results
