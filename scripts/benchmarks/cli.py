"""The bench's command line: parses the options (`scripts/bench --help`), prepares the binaries and
the test music, runs the figures asked for (all of them by default), prints each as it goes and
the whole as JSON at the end."""
import argparse, contextlib, json, os, platform, shutil, statistics, subprocess, tempfile, time
from . import __doc__ as DESCRIPTION  # the package's docstring: the figures, for --help
from . import common
from .common import prepare, start_pulse, latency_items
from .figures.latency import longform_latency, latency_figures, describe_latency
from .figures.memory import lookahead_memory
from .figures.playback import longform_playback
from .figures.render import render_throughput
from .figures.server import server_figures
from .figures.speaker_cut import speaker_cut
from .figures.speaker_fan_out import speaker_fan_out
from .figures.speaker_latency import speaker_latency
from .figures.speaker_start import speaker_start
from .figures.speaker_events import speaker_events
from .figures.speaker_sync import speaker_sync
from .figures.speaker_wire import speaker_wire
from .peers.mpd import mpd_playback, mpd_latency


@contextlib.contextmanager
def work_directory(keep_logs):
    """The run's temporary directory; with `keep_logs`, its logs (*.log, at any depth) are copied
    there when the run ends, pass or fail, so that a bad figure can be traced afterwards."""
    with tempfile.TemporaryDirectory(prefix="longform-bench-") as work:
        try:
            yield work
        finally:
            for root, _, names in os.walk(work) if keep_logs else ():
                for name in names:
                    if name.endswith(".log"):
                        target = os.path.join(keep_logs, os.path.relpath(os.path.join(root, name), work))
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        shutil.copy(os.path.join(root, name), target)


def main():
    parser = argparse.ArgumentParser(description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=60, help="seconds of playback each CPU figure is measured over")
    parser.add_argument("--cpu-runs", type=int, default=3, help="alternating runs of each player in the CPU figures (the median is printed)")
    parser.add_argument("--trials", type=int, default=5, help="trials of each command in the latency figures (the median is printed)")
    parser.add_argument("--only", choices=["playback", "latency", "server", "speakers", "speaker-start", "speaker-events", "speaker-latency", "speaker-cut",
                                             "speaker-fan-out", "speaker-wire"],
                        help="run only the CPU, latency, serve, speaker sync, speakers' start, speakers after events, speaker command-latency, speaker cut, speaker fan-out or speakers' wire figures")
    parser.add_argument("--sync-seconds", type=int, default=600, help="seconds of music the speakers' sync is measured over")
    parser.add_argument("--jitter", default=[0.0, 5.0], type=lambda text: [float(value) for value in text.split(",")], help="the network jitter (ms, comma-separated) the speakers' sync is measured with")
    parser.add_argument("--starts", type=int, default=20, help="cold starts of three speakers in the speakers' start figure")
    parser.add_argument("--start-seconds", type=int, default=10, help="seconds each start of the speakers' start figure plays")
    parser.add_argument("--events", type=int, default=20, help="rounds of a seek, a skip, an edit, a pause and resume and a join in the speakers' events figure")
    parser.add_argument("--skews", default=[0.0, 0.0, 0.0], type=lambda text: [float(value) for value in text.split(",")],
                        help="how many ppm fast each of the three speakers' clocks runs in the start figure (comma-separated, e.g. 0,200,-200)")
    parser.add_argument("--start-jitter", type=float, default=0.0,
                        help="the network jitter (ms) of the start figure: with it the sender runs in a namespace behind scripts/impair")
    parser.add_argument("--start-cut", type=lambda text: tuple(float(value) for value in text.split(",")),
                        help="AT,SECONDS: in each start of the start figure, cut the link to the sender (in a namespace behind scripts/impair) AT s in, for SECONDS s")
    parser.add_argument("--start-rate", type=float, help="the link's rate (Mbit/s) in the start figure: with it the sender runs in a namespace behind scripts/impair --rate")
    parser.add_argument("--start-load", type=int, default=0, help="busy processes (yes > /dev/null) sharing the cores during each start of the start figure")
    parser.add_argument("--start-state", choices=["fresh", "kept"], default="fresh",
                        help="each start of the start figure with speakers of a new user (fresh: no device rates kept) or of one starting again (kept: each room's state from the start before)")
    parser.add_argument("--keep-logs", metavar="DIR", help="copy every log the run wrote (the speakers', senders' and servers') into DIR at its end, pass or fail")
    parser.add_argument("--speaker-verbose", type=int, default=0, metavar="N",
                        help="give each `longform speaker` --verbose N times (1: debug, 2: also each timing report)")
    parser.add_argument("--cut-lookahead", type=int, default=180, help="the speaker route's look-ahead (s) in the cut figure: the cut lasts that long and 20 s more")
    parser.add_argument("--fan-out", default=[1, 4, 16, 64], type=lambda text: [int(value) for value in text.split(",")], help="the numbers of speakers (comma-separated) one sender feeds in the fan-out figure")
    parser.add_argument("--speaker-codec", choices=["float", "pcm", "flac"],
                        help="the codec of every speaker route the bench starts but the wire figure's, which runs each (default: the route's own)")
    parser.add_argument("--wire-seconds", type=int, default=600, help="seconds of music sent ahead to the speaker in the wire figure")
    parser.add_argument("--wire-rate", type=float, default=50, help="the link's rate (Mbit/s) in the wire figure")
    parser.add_argument("--latency-rate", type=float,
                        help="the link's rate (Mbit/s) in the speakers' command-latency figure: with it each sender runs in a namespace behind scripts/impair --rate")
    arguments = parser.parse_args()
    if len(arguments.skews) != 3:
        parser.error("--skews takes three values, one per speaker")
    items = prepare()
    results = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
               + subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()}
    everything = arguments.only is None
    common.SPEAKER_ARGUMENTS[:] = ["--verbose"] * arguments.speaker_verbose
    common.SPEAKER_CODEC = arguments.speaker_codec
    common.START_STATE_KEPT = arguments.start_state == "kept"
    with work_directory(arguments.keep_logs) as work:
        if arguments.only == "server":
            results["server"] = server_figures(items, work)
            print(json.dumps(results, indent=2))
            return
        if arguments.only == "speakers":
            results["speakers"] = speaker_sync(items, work, arguments.sync_seconds, arguments.jitter)
            print(json.dumps(results, indent=2))
            return
        if arguments.only == "speaker-start":
            results["speaker_start"] = speaker_start(items, work, arguments.starts, arguments.start_seconds, arguments.skews, arguments.start_jitter, arguments.start_cut, arguments.start_load,
                                                   arguments.start_rate)
            print(json.dumps(results, indent=2))
            return
        if arguments.only == "speaker-events":
            results["speaker_events"] = speaker_events(items, work, arguments.events)
            print(json.dumps(results, indent=2))
            return
        if arguments.only == "speaker-latency":
            results["speaker_latency"] = speaker_latency(work, arguments.trials, arguments.latency_rate)
            print(json.dumps(results, indent=2))
            return
        if arguments.only == "speaker-cut":
            results["speaker_cut"] = speaker_cut(items, work, arguments.cut_lookahead)
            print(json.dumps(results, indent=2))
            return
        if arguments.only == "speaker-fan-out":
            results["speaker_fan_out"] = speaker_fan_out(items, work, arguments.fan_out)
            print(json.dumps(results, indent=2))
            return
        if arguments.only == "speaker-wire":
            results["speaker_wire"] = speaker_wire(items, work, arguments.wire_seconds, arguments.wire_rate)
            print(json.dumps(results, indent=2))
            return
        if everything:
            results["render"] = render_throughput(items, work)
            print(f"render: {results['render']['audio_seconds']} s of audio: longform {results['render']['longform_wall']} s, "
                  f"ffmpeg {results['render']['ffmpeg_wall']} s, ffmpeg/longform {results['render']['ratio_wall']}", flush=True)
        server, address = start_pulse(work)
        try:
            env = dict(os.environ, PULSE_SERVER=address)
            playback = {}
            for name, ours, theirs in [("null", lambda: longform_playback(items, "null", arguments.seconds, env),
                                        lambda: mpd_playback(items, work, "null", arguments.seconds)),
                                       ("pulse", lambda: longform_playback(items, "pulse:bench", arguments.seconds, env),
                                        lambda: mpd_playback(items, work, "pulse", arguments.seconds, address))] if everything or arguments.only == "playback" else []:
                # Alternating runs of each, so that a machine busier in one stretch weighs on both.
                runs = [(ours(), theirs()) for _ in range(arguments.cpu_runs)]
                longform, mpd = statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs)
                playback[name] = {"longform_cpu_seconds_per_minute": round(longform, 3), "mpd_cpu_seconds_per_minute": round(mpd, 3),
                                  "mpd/longform": round(mpd / longform, 2) if longform else None,
                                  "runs": [[round(a, 3), round(b, 3)] for a, b in runs]}
                print(f"playback to {name}: CPU per minute (median of {len(runs)} alternating runs): longform {longform:.3f} s, "
                      f"mpd {mpd:.3f} s, mpd/longform {playback[name]['mpd/longform']}; runs (longform, mpd): {playback[name]['runs']}", flush=True)
            if playback:
                results["playback"] = playback
            latency_items()
            latency = {}
            for name, ours, theirs in [] if arguments.only == "playback" else [("null", lambda: longform_latency("null", arguments.trials, env),
                                        lambda: mpd_latency(work, "fifo", arguments.trials, env)),
                                       ("pulse", lambda: longform_latency("pulse:bench", arguments.trials, env),
                                        lambda: mpd_latency(work, "pulse", arguments.trials, env, address))]:
                longform, mpd = ours(), theirs()
                latency[name] = {}
                for command in ["play", "next", "seek", "remove"]:
                    figures = {player: latency_figures(trials.get(command, []), trials.get(command + "_skipped", []))
                               for player, trials in [("longform", longform), ("mpd", mpd)]}
                    mine, peer = figures["longform"]["first_sound_ms"], figures["mpd"]["first_sound_ms"]
                    latency[name][command] = {"longform": figures["longform"], "mpd": figures["mpd"],
                                              "mpd/longform": round(peer / mine, 2) if mine and peer else None}
                    print(f"latency on {name}, {command}: " + "; ".join(
                        f"{player} {describe_latency(figures[player])}" for player in ["longform", "mpd"])
                        + f"; mpd/longform {latency[name][command]['mpd/longform']} (goal: under 50 ms and less than mpd)", flush=True)
            if latency:
                results["latency"] = latency
        finally:
            server.kill()
            server.wait()
        if not everything:
            print(json.dumps(results, indent=2))
            return
        results["server"] = server_figures(items, work)
        results["speakers"] = speaker_sync(items, work, arguments.sync_seconds, arguments.jitter)
        results["speaker_start"] = speaker_start(items, work, arguments.starts, arguments.start_seconds, arguments.skews, arguments.start_jitter, arguments.start_cut, arguments.start_load,
                                                   arguments.start_rate)
        results["speaker_events"] = speaker_events(items, work, arguments.events)
        results["speaker_latency"] = speaker_latency(work, arguments.trials, arguments.latency_rate)
        results["speaker_cut"] = speaker_cut(items, work, arguments.cut_lookahead)
        results["speaker_fan_out"] = speaker_fan_out(items, work, arguments.fan_out)
        results["speaker_wire"] = speaker_wire(items, work, arguments.wire_seconds, arguments.wire_rate)
        results["memory"] = lookahead_memory(items)
        print(f"5 min look-ahead: peak RSS {results['memory']['peak_bytes'] / 2**20:.1f} MiB, PCM {results['memory']['pcm_bytes'] / 2**20:.1f} MiB, "
              f"ratio {results['memory']['ratio_to_pcm']} (goal <= 2)", flush=True)
    print(json.dumps(results, indent=2))
