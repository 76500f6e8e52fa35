"""mpd, the peer of the playback, command-latency and `serve` figures: an mpd with its own
configuration, music directory and socket, driven over its protocol (`MPD`), and its side of each
of those figures: CPU per minute of playing to its null or PulseAudio output, the latency of its
commands heard on its fifo or PulseAudio output, and its `idle` clients and playlist edits."""
import os, socket, subprocess, threading, time
from ..common import (
    AUDIO, CPUGroup, measure_process, LATENCY_ITEMS, Listener, read_frames, record_monitor, in_item, EventClients,
    paced)


class MPD:
    """mpd with its own configuration, music directory and socket, driven over its protocol."""

    def __init__(self, work, output, pulse_server=None, fifo=False, group=None):
        self.directory = os.path.join(work, "mpd-" + output)
        os.makedirs(self.directory, exist_ok=True)
        self.socket = os.path.join(self.directory, "socket")
        self.fifo = os.path.join(self.directory, "fifo")
        outputs = {"null": 'audio_output {\n type "null"\n name "null"\n}\n',
                   "pulse": f'audio_output {{\n type "pulse"\n name "pulse"\n server "{pulse_server}"\n sink "bench"\n}}\n',
                   "fifo": f'audio_output {{\n type "fifo"\n name "fifo"\n path "{self.fifo}"\n format "44100:16:2"\n}}\n'}
        # "latency-fifo", "server-null": a directory of its own for the same output.
        output = output.split("-", 1)[-1]
        config = os.path.join(self.directory, "mpd.conf")
        with open(config, "w") as file:
            file.write(f'music_directory "{AUDIO}"\ndb_file "{self.directory}/db"\nstate_file "{self.directory}/state"\n'
                       f'pid_file "{self.directory}/pid"\nbind_to_address "{self.socket}"\nlog_file "{self.directory}/log"\n'
                       # The serve figures hold 100 idle clients and a command connection (mpd's default allows 100).
                       'max_connections "256"\n'
                       + outputs[output])
        # A socket left by an earlier run in this directory would read as "started".
        if os.path.exists(self.socket):
            os.remove(self.socket)
        self.process = subprocess.Popen(["mpd", "--no-daemon", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        preexec_fn=group.join if group else None)
        deadline = time.monotonic() + 30  # a loaded machine has taken over 10 s
        while not os.path.exists(self.socket):
            if time.monotonic() > deadline:
                raise RuntimeError("mpd did not start; see " + self.directory + "/log")
            time.sleep(0.05)

    def command(self, line):
        """Sends one command on a connection of its own; returns the whole reply."""
        send, close = self.connect()
        try:
            return send(line)
        finally:
            close()

    def load(self, items):
        self.command("update")
        deadline = time.monotonic() + 30
        while "updating_db" in self.command("status") and time.monotonic() < deadline:
            time.sleep(0.1)
        for item in items:
            reply = self.command(f'add "{os.path.basename(item)}"')
            if reply.startswith("ACK"):
                raise RuntimeError(reply)

    def play(self, items):
        self.load(items)
        self.command("play")

    def connect(self):
        """One open connection: a function that sends a command and returns its whole reply, and one that closes it."""
        connection = socket.socket(socket.AF_UNIX)
        connection.connect(self.socket)
        reader = connection.makefile("rb")
        reader.readline()  # greeting

        def send(line):
            connection.sendall((line + "\n").encode())
            reply = []
            while True:
                text = reader.readline().decode()
                reply.append(text)
                if text.startswith("OK") or text.startswith("ACK"):
                    return "".join(reply)
        return send, connection.close

    def stop(self):
        self.process.kill()
        self.process.wait()


def mpd_playback(items, work, output, seconds, pulse_server=None):
    group = CPUGroup("mpd")
    mpd = MPD(work, output, pulse_server, group=group)
    try:
        mpd.play(items)
        return measure_process(mpd.process, seconds, group)
    finally:
        mpd.stop()
        group.remove()


# --- Command latency -------------------------------------------------------------------------

def mpd_latency(work, output, trials, env, pulse_server=None):
    """mpd playing the latency items, steered over one protocol connection."""
    mpd = MPD(work, "latency-" + output, pulse_server, fifo=(output == "fifo"))
    listener = Listener()
    recorder = None
    try:
        if output == "fifo":
            while not os.path.exists(mpd.fifo):
                time.sleep(0.05)
            fifo = os.open(mpd.fifo, os.O_RDONLY | os.O_NONBLOCK)
            threading.Thread(target=read_frames, args=(fifo, listener), daemon=True).start()
        else:
            recorder = record_monitor(listener, env)
        mpd.load(LATENCY_ITEMS)
        connection, close = mpd.connect()
        connection("play 0")
        time.sleep(2)
        trials_of = {"play": [], "next": [], "seek": [], "remove": []}
        for _ in range(trials):
            connection("stop")
            time.sleep(0.5)
            trials_of["play"].append(listener.measure(lambda sample: sample != 0, lambda: connection("play"), None))
            time.sleep(1)
            connection("play 0")
            time.sleep(1)
            trials_of["next"].append(listener.measure(in_item(2), lambda: connection("next"), 2000))
            time.sleep(0.5)
            connection("play 0")
            time.sleep(1)
            trials_of["seek"].append(listener.measure(lambda sample: sample == 1200, lambda: connection("seekcur 20"), 1200))
            time.sleep(0.5)
            connection("play 0")
            time.sleep(1)
            trials_of["remove"].append(listener.measure(in_item(2), lambda: connection("delete 0"), 2000))
            connection(f'addid "{LATENCY_ITEMS[0]}" 0')
            time.sleep(0.5)
        close()
        return latency_results(trials_of)
    finally:
        if recorder:
            recorder.kill()
        mpd.stop()


def latency_results(trials_of):
    """Each command's trials, as `longform-latency` prints them: "play" the milliseconds of each
    trial whose effect was heard, "play_skipped" the effect's first frames each of them lacks."""
    results = {}
    for command, trials in trials_of.items():
        heard = [(milliseconds, skipped) for milliseconds, skipped in trials if milliseconds is not None]
        results[command] = [round(milliseconds, 1) for milliseconds, _ in heard]
        results[command + "_skipped"] = [skipped for _, skipped in heard]
    return results


# --- `serve` ---------------------------------------------------------------------------------

def mpd_server(items, work, clients, trials, edits):
    mpd = MPD(work, "server-null")
    try:
        mpd.load(items)
        send, close = mpd.connect()
        pending = []

        def edit(index):
            if index % 2 == 0:
                pending.append(send(f'addid "{os.path.basename(items[index % len(items)])}" 0').split("Id: ")[1].split("\n")[0])
            else:
                send("deleteid " + pending.pop())
        alone = paced(edits, 100, edit)
        sockets = []
        for _ in range(clients):
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(mpd.socket)
            sock.recv(100)  # greeting
            sock.sendall(b"idle playlist\n")
            sockets.append(sock)
        readers = EventClients(sockets, b"changed: playlist\n")
        time.sleep(1)
        fanout = []
        for trial in range(trials):
            readers.expect()
            sent = time.monotonic()
            reply = send(f'addid "{os.path.basename(items[trial % len(items)])}"')
            arrivals = readers.wait_all()
            fanout.append(max(arrivals.values()) - sent)
            # Each idle client asks again for the next change (the delete, then the next trial's add).
            for sock in sockets:
                sock.sendall(b"idle playlist\n")
            readers.expect()
            send("deleteid " + reply.split("Id: ")[1].split("\n")[0])
            readers.wait_all()
            for sock in sockets:
                sock.sendall(b"idle playlist\n")
        watched = paced(edits, 100, edit)
        readers.close()
        close()
        return [round(value * 1000, 2) for value in fanout], alone, watched
    finally:
        mpd.stop()
