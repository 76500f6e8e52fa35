"""Speakers in step after what a listener does: the three rooms of the start figure
(`speaker_start`: one 6-channel null sink, a remap sink per room, one recording), fed by
`longform serve` playing the bench's ten tracks, and steered over its API. Each round seeks within
the item, skips to the next, removes the item playing (an edit), pauses and resumes, and stops one
room's speaker and starts it again on its port with its state directory (a join: the sender
reconnects, and the speaker starts at its device's rate as it last measured it). The windows of the
`AFTER_SECONDS` after each event are measured as a start's are: between any two rooms, the offset
and the correlation per 100 ms window, the jumps, and the windows where one room was silent while
another played. A pause's windows run from the pause to 5 s after the resume; a join's from the
window after the joining room's first sound (silent until then, as it should be). Beside it,
Snapcast's three clients on the same rooms, fed by mpd's fifo output, through the same events
over mpd's protocol."""
import itertools, os, statistics, subprocess, time
from ..common import speaker_route, LONGFORM, AUDIO, start_pulse, start_speaker, port_from_log, http_caller, percentile
from ..peers.mpd import MPD
from ..peers.snapcast import start_snapserver, start_snapclient
from .speaker_start import (ROOM_NAMES, RATE, WINDOW, REACH, RoomRecording, room_modules, read_rooms, is_audible, window_row,
                            start_figures)

AFTER_SECONDS = 5
EVENTS = ["seek", "skip", "edit", "pause", "join"]


def play_rounds(recording, rounds, act):
    """`rounds` rounds of the events, each done by `act(kind, step)`; returns the marks: (kind,
    first frame measured, frame after the last), in recording frames. A join is `act("leave")`,
    a second, then `act("join")`, measured from the window after the joining room's first sound."""
    marks = []
    for _ in range(rounds):
        for kind in EVENTS:
            if kind == "pause":
                begin = recording.frame()
                act("pause")
                time.sleep(1.5)
                act("resume")
            elif kind == "join":
                act("leave")
                time.sleep(1)
                begin = recording.frame()
                act("join")
            else:
                begin = recording.frame()
                act(kind)
            time.sleep(AFTER_SECONDS + 0.5)
            marks.append((kind, begin, recording.frame() - RATE // 2))
    return marks


def event_windows(rooms, kind, begin, end):
    """The rows (`window_row`) of the windows from `begin` to `end`, all rooms quiet ones left out;
    a join's from the window after the one its room (the last) starts in (that one is part
    silence, which the correlation cannot place)."""
    rows = []
    joined = kind != "join"
    for start in range(max(begin, REACH), min(end, len(rooms[0]) - WINDOW - REACH), WINDOW):
        audible = [is_audible(room, start) for room in rooms]
        if not any(audible):
            continue
        if not joined:
            joined = audible[-1]
            continue
        rows.append(window_row(rooms, start))
    return rows


def event_figures(path, marks):
    """Per kind of event: each event's figures (`start_figures` over its windows), and over all
    of them the worst window, its median and p90 across events, the events over 100 µs, the jumps,
    the windows with a room silent, the worst correlation."""
    rooms = read_rooms(path)
    per_kind = {kind: [] for kind in EVENTS}
    for kind, begin, end in marks:
        per_kind[kind].append(start_figures(event_windows(rooms, kind, begin, end), trims_end=False))
    summary = {}
    for kind, runs in per_kind.items():
        worst = sorted(run["worst_us"] for run in runs if run["worst_us"] is not None)
        summary[kind] = {"events": len(runs), "worst_us": worst[-1] if worst else None,
                         "median_of_worst_us": round(statistics.median(worst), 1) if worst else None,
                         "p90_of_worst_us": round(percentile(worst, 0.9), 1) if worst else None,
                         "events_over_100_us": sum(value > 100 for value in worst),
                         "median_us": round(statistics.median(run["median_us"] for run in runs if run["median_us"] is not None), 1) if worst else None,
                         "jumps": sum(run["jumps"] for run in runs),
                         "silent_windows": sum(run["silent_windows"] for run in runs),
                         "unmatched_windows": sum(run["unmatched_windows"] for run in runs),
                         "worst_correlation": min((run["worst_correlation"] for run in runs if run["worst_correlation"] is not None), default=None),
                         "runs": runs}
    return summary


def stop_all(recording, processes):
    """Stops the recording (if started), then the processes, the last started first."""
    if recording:
        recording.stop()
    for process in reversed(list(processes.values())):
        process.kill()
        process.wait()


def measured(recording, marks):
    """`event_figures` of the recording, which is then deleted."""
    figures = event_figures(recording.path, marks)
    os.remove(recording.path)
    return figures


def describe(kind, figures):
    return (f"{kind} ×{figures['events']}: worst window median {figures['median_of_worst_us']} µs, p90 {figures['p90_of_worst_us']} µs, "
            f"worst {figures['worst_us']} µs, {figures['events_over_100_us']} over 100 µs, median {figures['median_us']} µs, "
            f"{figures['jumps']} jumps, {figures['silent_windows']} windows with a room silent, {figures['unmatched_windows']} unmatched, "
            f"worst correlation {figures['worst_correlation']}")


def longform_events(work, env, address, items, rounds):
    """Three speakers and `longform serve` on a `speaker:` route to them, steered over its API."""
    processes = {}
    recording = None
    try:
        ports = []
        for name in ROOM_NAMES:
            # A room's state kept from one of its speakers to the next: a join is that speaker started again.
            processes[name], port = start_speaker(work, env, f"events-{name}", f"pulse:room-{name}", state=os.path.join(work, f"events-state-{name}"))
            ports.append(port)
        log = os.path.join(work, "events-serve.log")
        processes["serve"] = subprocess.Popen([LONGFORM, "serve", "--http", "127.0.0.1:0", "--state", os.path.join(work, "events-state"),
                                               "--music", AUDIO, "--no-watch", "--route", speaker_route(f"127.0.0.1:{port}" for port in ports)],
                                              env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        call = http_caller(port_from_log(log, r"serving http://127\.0\.0\.1:(\d+)/", "longform serve"))
        recording = RoomRecording(address, os.path.join(work, "events-longform.raw"))
        # Enough items for every round's skip and edit, each from its own place.
        names = [os.path.basename(item) for item in items]
        call("POST", "/api/playlist/items", {"items": [{"path": names[index % len(names)]} for index in range(3 * rounds + 2)]})
        call("POST", "/api/transport/play")
        time.sleep(4)

        join_numbers = itertools.count(1)

        def act(kind):
            if kind == "seek":
                call("POST", "/api/transport/seek", {"offset": 30 + 7 * (recording.frame() // RATE % 11)})
            elif kind == "skip":
                call("POST", "/api/transport/next")
            elif kind == "edit":
                current = call("GET", "/api/now-playing")["item"]["id"]
                call("DELETE", f"/api/playlist/items/{current}")
            elif kind == "pause":
                call("POST", "/api/transport/pause")
            elif kind == "resume":
                call("POST", "/api/transport/play")
            elif kind == "leave":
                processes[ROOM_NAMES[-1]].kill()
                processes[ROOM_NAMES[-1]].wait()
            elif kind == "join":
                # A name (and so a log) per join: each round's room is traced (`--keep-logs`).
                processes[ROOM_NAMES[-1]], _ = start_speaker(work, env, f"events-{ROOM_NAMES[-1]}-again-{next(join_numbers)}", f"pulse:room-{ROOM_NAMES[-1]}",
                                                             port=ports[-1], state=os.path.join(work, f"events-state-{ROOM_NAMES[-1]}"))
        marks = play_rounds(recording, rounds, act)
    finally:
        stop_all(recording, processes)
    return measured(recording, marks)


def snapcast_events(work, env, address, items, rounds):
    """mpd's fifo output into snapserver's pipe source and three snapclients on the rooms
    (Snapcast's defaults: a 1 s buffer, FLAC), steered over mpd's protocol; a join restarts the
    third snapclient."""
    mpd = MPD(work, "events-fifo")
    processes = {}
    recording = None
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(mpd.fifo) and time.monotonic() < deadline:
            time.sleep(0.05)
        processes["snapserver"], port = start_snapserver(work, "snapserver-events", f"pipe://{mpd.fifo}?name=mpd&sampleformat=44100:16:2&mode=read")
        for name in ROOM_NAMES:
            processes[name] = start_snapclient(port, f"events-{name}", f"room-{name}", env)
        recording = RoomRecording(address, os.path.join(work, "events-snapcast.raw"))
        mpd.load([items[index % len(items)] for index in range(3 * rounds + 2)])
        send, close = mpd.connect()
        try:
            send("play 0")
            time.sleep(4)

            def act(kind):
                if kind == "seek":
                    send(f"seekcur {30 + 7 * (recording.frame() // RATE % 11)}")
                elif kind == "skip":
                    send("next")
                elif kind == "edit":
                    send("delete " + next(line.split(": ")[1] for line in send("status").splitlines() if line.startswith("song: ")))
                elif kind == "pause":
                    send("pause 1")
                elif kind == "resume":
                    send("pause 0")
                elif kind == "leave":
                    processes[ROOM_NAMES[-1]].kill()
                    processes[ROOM_NAMES[-1]].wait()
                elif kind == "join":
                    processes[ROOM_NAMES[-1]] = start_snapclient(port, f"events-{ROOM_NAMES[-1]}", f"room-{ROOM_NAMES[-1]}", env)
            marks = play_rounds(recording, rounds, act)
        finally:
            close()
    finally:
        stop_all(recording, processes)
        mpd.stop()
    return measured(recording, marks)


def speaker_events(items, work, rounds=20):
    """`rounds` rounds of a seek, a skip, an edit, a pause and resume and a join, in Longform's
    three rooms, then in Snapcast's, each event's windows measured as a start's."""
    server, address = start_pulse(work, (), room_modules())
    env = dict(os.environ, PULSE_SERVER=address)
    try:
        longform = longform_events(work, env, address, items, rounds)
        snapcast = snapcast_events(work, env, address, items, rounds)
    finally:
        server.kill()
        server.wait()
    results = {}
    for kind in EVENTS:
        mine, peer = longform[kind], snapcast[kind]
        ratio = round(peer["worst_us"] / mine["worst_us"], 2) if mine["worst_us"] and peer["worst_us"] else None
        results[kind] = {"longform": mine, "snapcast": peer, "snapcast/longform_worst": ratio}
        print(f"speakers after each {kind}: longform {describe(kind, mine)}; snapcast {describe(kind, peer)}; "
              f"snapcast/longform (worst) {ratio} (goal: every window within 100 µs, no jump, no room silent, correlation ≥ 0.9999)", flush=True)
    return results
