"""Speakers' command latency: `longform serve` on a `speaker:` route to three `longform speaker`
processes, each playing to a null sink of its own (a room); the time from pause, play and skip to
their effect heard in all three rooms, beside Snapcast's clients fed by mpd (`peers/snapcast.py`).
With a link's rate, each sender (serve, snapserver) runs in the sender's namespace behind
`scripts/impair --rate`, so that each command to the speakers queues behind the fill on the link
(a play from the start or a skip sends the look-ahead again); the link's load over the half second
before each command is reported with it."""
import os, re, subprocess
from ..common import (
    AUDIO, LONGFORM, start_pulse, LATENCY_ITEMS, latency_items, median, port_from_log, http_caller, start_speaker,
    ROOMS, Rooms, room_commands, speaker_sender, LinkLoad)
from ..peers.snapcast import snapcast_room_latency


# --- Speakers: command latency beside Snapcast ----------------------------------------------

TOKEN = "bench-speaker-latency"  # serve's token on the sender's namespace's address (not loopback)
# Behind a link of limited rate, three of the bench's tracks follow the latency items, so that the
# look-ahead sent after a play from the start or a skip is music that compresses as music does
# (the latency items' numbered frames take a few hundred KB as FLAC) and the fill lasts seconds.
FILL_ITEMS = ["track00.flac", "track01.mp3", "track02.m4a"]


def room_items(rate_mbit):
    """The playlist of the figure: the latency items, and behind a limited link `FILL_ITEMS`."""
    return LATENCY_ITEMS + (FILL_ITEMS if rate_mbit else [])


def longform_room_latency(work, env, trials, rate_mbit=None):
    """`longform serve` on the route `speaker:` to three `longform speaker` processes, one per room;
    with `rate_mbit`, serve in the sender's namespace behind a link of that rate."""
    processes = []
    rooms = impaired = load = None
    try:
        ports = []
        for room in ROOMS:
            process, port = start_speaker(work, env, room, "pulse:" + room)
            processes.append(process)
            ports.append(port)
        log = os.path.join(work, "rooms-serve.log")
        command, serve_env, impaired = speaker_sender([LONGFORM, "serve", "--state", os.path.join(work, "rooms-state"), "--music", AUDIO, "--no-watch"],
                                                      env, ports, 0, rate_mbit=rate_mbit)
        address = impaired.host.sender_address if impaired else "127.0.0.1"
        command += ["--http", f"{address}:0"] + (["--token", TOKEN] if impaired else [])
        processes.append(subprocess.Popen(command, env=serve_env, stdout=open(log, "w"), stderr=subprocess.STDOUT))
        call = http_caller(port_from_log(log, r"serving http://" + re.escape(address) + r":(\d+)/", "longform serve"), address, TOKEN if impaired else None)
        ids = [item["id"] for item in call("POST", "/api/playlist/items", {"items": [{"path": name} for name in room_items(rate_mbit)]})["items"]]
        rooms = Rooms(env)
        load = LinkLoad(rate_mbit) if impaired else None
        return room_commands(rooms, lambda: call("POST", "/api/transport/play"), lambda: call("POST", "/api/transport/pause"),
                             lambda: call("POST", "/api/transport/next"), lambda: call("POST", "/api/transport/play", {"id": ids[0]}), trials, load)
    finally:
        if load:
            load.close()
        if rooms:
            rooms.close()
        for process in reversed(processes):
            process.kill()
            process.wait()
        if impaired:
            impaired.close()


def speaker_latency(work, trials, rate_mbit=None):
    """The time from pause, play and skip to their effect in all three rooms: Longform's speakers
    against Snapcast's clients, on one PulseAudio server with a null sink per room, over loopback
    or (`rate_mbit`) a link of that rate."""
    latency_items()
    server, address = start_pulse(work, ROOMS)
    env = dict(os.environ, PULSE_SERVER=address)
    try:
        longform = longform_room_latency(work, env, trials, rate_mbit)
        snapcast = snapcast_room_latency(work, env, trials, room_items(rate_mbit), rate_mbit)
    finally:
        server.kill()
        server.wait()
    results = {"rate_mbit": rate_mbit}
    link = f" over a {rate_mbit:g} Mbit/s link" if rate_mbit else ""
    for command in ["pause", "play", "skip"]:
        mine, peer = median(longform[command]), median(snapcast[command])
        results[command] = {"longform_ms": mine, "snapcast_ms": peer, "snapcast/longform": round(peer / mine, 2) if mine and peer else None,
                            "longform_trials": longform[command], "snapcast_trials": snapcast[command]}
        loads = ""
        if rate_mbit:
            results[command]["longform_link_load"] = longform[command + "_link_load"]
            results[command]["snapcast_link_load"] = snapcast[command + "_link_load"]
            loads = (f"; the link's load in the 0.5 s before each command: longform {longform[command + '_link_load']}, "
                     f"snapcast {snapcast[command + '_link_load']}")
        print(f"speakers, {command} heard in all {len(ROOMS)} rooms{link}: longform {mine} ms, snapcast {peer} ms, "
              f"snapcast/longform {results[command]['snapcast/longform']} (goal: under 150 ms){loads}", flush=True)
    return results
