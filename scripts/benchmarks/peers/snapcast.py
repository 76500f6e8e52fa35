"""Snapcast 0.26, the peer of the speaker figures: snapserver and snapclients started with a
configuration of the bench's own, and their side of each figure: the pair's sync on one sink, the
command latency in three rooms (fed by mpd's fifo output), the longest cut survived, and how many
clients one snapserver feeds."""
import os, socket, subprocess, time
from ..common import (
    run, cpu_seconds, CPUGroup, peak_memory_kib, start_pulse, free_port, sync_pcm, pair_offsets,
    offset_figures, describe_offsets, Recording, ROOMS, Rooms, room_commands, CutRun, gapless_outputs, SenderHost, start_impair, LinkLoad)
from .mpd import MPD


def wait_for_port(port, what, timeout=10, address="127.0.0.1"):
    """Until something accepts connections on `address`:`port`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((address, port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.1)


def start_snapserver(work, name, source, host=None, group=None):
    """snapserver on a free loopback port (or, given a SenderHost, on its address in the namespace)
    with `source` (its `source =` line) and nothing else (no HTTP, no control port, no log), in
    the CPUGroup `group` if given; returns the process once it accepts, and the port."""
    port = free_port(socket.SOCK_STREAM)
    address = host.sender_address if host else "127.0.0.1"
    directory = os.path.join(work, name)
    os.makedirs(directory, exist_ok=True)
    config = os.path.join(directory, "snapserver.conf")
    with open(config, "w") as file:
        file.write(f"[server]\ndatadir = {directory}\n[http]\nenabled = false\n[tcp]\nenabled = false\n"
                   f"[stream]\nbind_to_address = {address}\nport = {port}\nsource = {source}\n[logging]\nsink = null\n")
    process = subprocess.Popen((host.wrapper if host else []) + ["snapserver", "-c", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               preexec_fn=group.join if group else None)
    try:
        wait_for_port(port, "snapserver", address=address)
    except Exception:
        process.kill()
        process.wait()
        raise
    return process, port


def start_snapclient(port, host_id, sink, env, address="127.0.0.1", output=None):
    """A snapclient of the snapserver at `address`:`port`, playing to the PulseAudio sink `sink`
    or, given `output`, writing what it plays to that file (raw 16-bit stereo)."""
    player = ["--player", f"file:filename={output}"] if output else ["--player", "pulse", "--soundcard", sink]
    return subprocess.Popen(["snapclient", "--host", address, "--port", str(port), "--hostID", host_id] + player + ["--logsink", "null"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --- Speakers: the pair's sync ---------------------------------------------------------------

def snapcast_sync(items, work, seconds):
    """Snapcast's pair on the same sink: snapserver reads the same music from a file source, and
    two snapclients play it, one into a mono remap sink on the sink's left channel, one on its
    right (Snapcast has no channel option); the monitor is analysed as for ours."""
    server, address = start_pulse(work)
    env = dict(os.environ, PULSE_SERVER=address)
    processes = []
    try:
        for channel in ["left", "right"]:
            run(["pactl", "--server", address, "load-module", "module-remap-sink", f"sink_name=snap-{channel}", "master=bench",
                 "channels=1", "channel_map=mono", f"master_channel_map=front-{channel}", "remix=yes"], stdout=subprocess.DEVNULL)
        pcm = sync_pcm(items, work, seconds)
        snapserver, port = start_snapserver(work, "snapserver-sync", f"file://{pcm}?name=music&sampleformat=44100:16:2")
        processes.append(snapserver)
        recording = Recording(address, work, "sync-snapcast", latency_msec=None)
        processes.append(recording.process)
        for channel in ["left", "right"]:
            processes.append(start_snapclient(port, f"sync-{channel}", f"snap-{channel}", env))
        time.sleep(seconds + 2)
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()
        server.kill()
        server.wait()
    result = offset_figures(pair_offsets(recording.path))
    result["seconds"] = seconds
    print(f"speakers, Snapcast 0.26 beside them (loopback): {describe_offsets(result)}", flush=True)
    return result


# --- Speakers: command latency beside Snapcast ----------------------------------------------

def snapcast_room_latency(work, env, trials, items, rate_mbit=None):
    """mpd's fifo output into snapserver's pipe source (Snapcast's usual setup), three snapclients
    playing to PulseAudio, one per room, with Snapcast's defaults (a 1 s buffer, FLAC), playing
    `items` (names in the bench's music directory); with `rate_mbit`, snapserver in the sender's
    namespace and its clients behind `scripts/impair` with a link of that rate (mpd, on its
    socket, feeds the fifo from here)."""
    mpd = MPD(work, "snapcast-fifo")
    processes = []
    rooms = host = relay = load = None
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(mpd.fifo) and time.monotonic() < deadline:
            time.sleep(0.05)
        host = SenderHost() if rate_mbit else None
        snapserver, port = start_snapserver(work, "snapserver", f"pipe://{mpd.fifo}?name=mpd&sampleformat=44100:16:2&mode=read", host)
        processes.append(snapserver)
        if host:
            relayed = free_port(socket.SOCK_STREAM)
            relay = start_impair(["--tcp", f"127.0.0.1:{relayed}={host.sender_address}:{port}"], rate_mbit=rate_mbit)
            port = relayed
        for room in ROOMS:
            processes.append(start_snapclient(port, room, room, env))
        mpd.load(items)
        connection, close = mpd.connect()
        rooms = Rooms(env)
        load = LinkLoad(rate_mbit) if host else None
        try:
            return room_commands(rooms, lambda: connection("pause 0"), lambda: connection("pause 1"), lambda: connection("next"),
                                 lambda: connection("play 0"), trials, load)
        finally:
            close()
    finally:
        if load:
            load.close()
        if rooms:
            rooms.close()
        for process in reversed(processes):
            process.kill()
            process.wait()
        if relay:
            relay.terminate()
            relay.wait()
        if host:
            host.close()
        mpd.stop()


# --- Speakers: the longest cut survived ----------------------------------------------------

def snapcast_cut(items, work):
    """snapserver in the namespace reading the same music, one snapclient here with Snapcast's
    defaults (a 1 s buffer): 8 s in, the link is cut for 20 s, then restored."""
    with CutRun(work) as trial:
        snapserver, port = start_snapserver(work, "snapserver-cut", f"file://{sync_pcm(items, work, 120)}?name=music&sampleformat=44100:16:2", trial.host)
        trial.processes.append(snapserver)
        trial.recording = Recording(trial.address, work, "cut-snapcast")
        trial.processes.append(start_snapclient(port, "cut", "bench", trial.env, address=trial.host.sender_address))
        time.sleep(8)
        trial.cut_link(20)
    return trial.figures()


# --- Speakers: how many one sender feeds ----------------------------------------------------

def snapcast_fan_out(work, pcm, count, seconds):
    """snapserver feeding `count` snapclients, each writing what it plays to a file: snapserver's
    CPU over `seconds` (after the 5 s the clients are given to settle), the clients' over the same
    and over their first minute (when `seconds` reaches past it), and whether every client played
    without a gap."""
    processes, outputs = [], []
    group = CPUGroup(f"snap-fan-out-{count}")
    try:
        server, port = start_snapserver(work, f"snap-fan-{count}", f"file://{pcm}?name=music&sampleformat=44100:16:2", group=group)
        processes.append(server)
        for index in range(count):
            output = os.path.join(work, f"snap-fan-{count}-{index}.raw")
            processes.append(start_snapclient(port, f"fan-{count}-{index}", None, os.environ, output=output))
            outputs.append(output)
        started = time.monotonic()
        time.sleep(5)
        clients_before = sum(cpu_seconds(process.pid) for process in processes[1:])
        server_before = group.seconds(server.pid)
        clients_first_minute = None
        if seconds + 5 >= 60:
            time.sleep(max(0, started + 60 - time.monotonic()))
            clients_first_minute = sum(cpu_seconds(process.pid) for process in processes[1:])
        time.sleep(max(0, started + 5 + seconds - time.monotonic()))
        server_cpu = group.seconds(server.pid) - server_before
        clients_cpu = sum(cpu_seconds(process.pid) for process in processes[1:]) - clients_before
        server_rss = peak_memory_kib(server.pid)
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()
        group.remove()
    whole, shortest = gapless_outputs(outputs)
    return {"clients": count, "server_cpu_seconds_per_minute": round(server_cpu / (seconds / 60), 3),
            "clients_cpu_seconds_per_minute": round(clients_cpu / (seconds / 60), 2), "server_peak_rss_mib": round(server_rss / 1024, 1),
            "clients_cpu_seconds_first_minute": None if clients_first_minute is None else round(clients_first_minute, 2),
            "gapless_clients": whole, "shortest_sound_seconds": shortest}
