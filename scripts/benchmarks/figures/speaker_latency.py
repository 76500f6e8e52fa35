"""Speakers' command latency: `longform serve` on a `speaker:` route to three `longform speaker`
processes, each playing to a null sink of its own (a room); the time from pause, play and skip to
their effect heard in all three rooms, beside Snapcast's clients fed by mpd (`peers/snapcast.py`)."""
import os, subprocess
from ..common import (
    speaker_route, AUDIO, LONGFORM, start_pulse, LATENCY_ITEMS, latency_items, median, port_from_log, http_caller, start_speaker,
    ROOMS, Rooms, room_commands)
from ..peers.snapcast import snapcast_room_latency


# --- Speakers: command latency beside Snapcast ----------------------------------------------

def longform_room_latency(work, env, trials):
    """`longform serve` on the route `speaker:` to three `longform speaker` processes, one per room."""
    processes = []
    rooms = None
    try:
        ports = []
        for room in ROOMS:
            process, port = start_speaker(work, env, room, "pulse:" + room)
            processes.append(process)
            ports.append(port)
        log = os.path.join(work, "rooms-serve.log")
        processes.append(subprocess.Popen([LONGFORM, "serve", "--http", "127.0.0.1:0", "--state", os.path.join(work, "rooms-state"),
                                           "--music", AUDIO, "--no-watch", "--route", speaker_route(f"127.0.0.1:{port}" for port in ports)],
                                          env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT))
        call = http_caller(port_from_log(log, r"serving http://127\.0\.0\.1:(\d+)/", "longform serve"))
        ids = [item["id"] for item in call("POST", "/api/playlist/items", {"items": [{"path": name} for name in LATENCY_ITEMS]})["items"]]
        rooms = Rooms(env)
        return room_commands(rooms, lambda: call("POST", "/api/transport/play"), lambda: call("POST", "/api/transport/pause"),
                             lambda: call("POST", "/api/transport/next"), lambda: call("POST", "/api/transport/play", {"id": ids[0]}), trials)
    finally:
        if rooms:
            rooms.close()
        for process in reversed(processes):
            process.kill()
            process.wait()


def speaker_latency(work, trials):
    """The time from pause, play and skip to their effect in all three rooms: Longform's speakers
    against Snapcast's clients, on one PulseAudio server with a null sink per room."""
    latency_items()
    server, address = start_pulse(work, ROOMS)
    env = dict(os.environ, PULSE_SERVER=address)
    try:
        longform = longform_room_latency(work, env, trials)
        snapcast = snapcast_room_latency(work, env, trials)
    finally:
        server.kill()
        server.wait()
    results = {}
    for command in ["pause", "play", "skip"]:
        mine, peer = median(longform[command]), median(snapcast[command])
        results[command] = {"longform_ms": mine, "snapcast_ms": peer, "snapcast/longform": round(peer / mine, 2) if mine and peer else None,
                            "longform_trials": longform[command], "snapcast_trials": snapcast[command]}
        print(f"speakers, {command} heard in all {len(ROOMS)} rooms: longform {mine} ms, snapcast {peer} ms, "
              f"snapcast/longform {results[command]['snapcast/longform']} (goal: under 150 ms)", flush=True)
    return results
