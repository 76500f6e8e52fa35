"""Helpers more than one figure or peer uses: the paths of the build, the binaries and the test music
(`prepare` builds Longform and makes the music), running a command, a process's CPU
time (`CPUGroup`) and memory, a PulseAudio server of the bench's own and recordings of its sinks'
monitors, the latency items whose samples number their frames and the `Listener` that reads them,
`longform speaker` and `serve` helpers, the sender's network namespace (`SenderHost`), the
speakers' test music, the pair's offsets, the rooms of the command-latency figure, the silences of
a recording and the cut run."""
import array, http.client, json, os, re, select, selectors, shutil, socket, statistics, subprocess, sys, threading, time, wave


# This file is scripts/benchmarks/common.py: the repository is three directories up.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, ".build")
AUDIO = os.path.join(BUILD, "bench-audio")
LONGFORM = os.path.join(BUILD, "release", "longform")
LATENCY = os.path.join(BUILD, "release", "longform-latency")
TICKS = os.sysconf("SC_CLK_TCK")


def run(command, **kwargs):
    return subprocess.run(command, check=True, **kwargs)


def prepare():
    run([os.path.join(ROOT, "scripts", "install-dependencies")])
    for program, package in [("mpd", "mpd"), ("snapserver", "snapserver"), ("snapclient", "snapclient")]:
        if shutil.which(program) is None:
            run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", package], stdout=subprocess.DEVNULL)
    if subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True).returncode != 0:
        run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "python3-numpy"], stdout=subprocess.DEVNULL)
    run(["swift", "build", "-c", "release", "--product", "longform"], cwd=ROOT, stdout=subprocess.DEVNULL)
    # `longform speaker` becomes this program when it is built beside `longform`.
    run(["swift", "build", "-c", "release", "--product", "longform-speaker"], cwd=ROOT, stdout=subprocess.DEVNULL)
    run(["swift", "build", "-c", "release", "--product", "longform-latency"], cwd=ROOT, stdout=subprocess.DEVNULL)
    os.makedirs(AUDIO, exist_ok=True)
    items = []
    # Ten two-minute tracks: chords over pink noise with a slow tremolo, a different key each.
    for index in range(10):
        extension = ["flac", "mp3", "m4a"][index % 3]
        path = os.path.join(AUDIO, f"track{index:02d}.{extension}")
        if not os.path.exists(path):
            wav = os.path.join(AUDIO, "source.wav")
            root = 110 * (1 + index % 5)
            run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "120",
                 "sine", str(root), "sine", str(root * 5 // 4), "pinknoise", "sine", str(root * 3 // 2),
                 "remix", "1,3v0.3", "2,4v0.3", "tremolo", "0.5", "40", "gain", "-8"])
            codec = {"flac": ["-c:a", "flac"], "mp3": ["-c:a", "libmp3lame", "-b:a", "256k"],
                     "m4a": ["-c:a", "aac", "-b:a", "256k"]}[extension]
            run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", wav] + codec + [path])
            os.remove(wav)
        items.append(path)
    return items


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class CPUGroup:
    """A control group the measured program starts in (it joins before it runs), so that its CPU
    time is read in nanoseconds over all its threads, ended ones included: /proc's figures come
    in 10 ms ticks, too coarse for the 0.1 s a minute that players use. Without a writable cgroup
    (not root), the ticks of /proc/PID/stat are read instead."""

    def __init__(self, name):
        self.path = None
        for root, usage in [("/sys/fs/cgroup/cpuacct", "cpuacct.usage"), ("/sys/fs/cgroup", "cpu.stat"), ("/sys/fs/cgroup/unified", "cpu.stat")]:
            path = os.path.join(root, f"longform-bench-{name}-{os.getpid()}")
            try:
                os.makedirs(path, exist_ok=True)
                if os.path.exists(os.path.join(path, usage)) and os.path.exists(os.path.join(path, "cgroup.procs")):
                    self.path, self.usage = path, usage
                    break
                os.rmdir(path)
            except OSError:
                continue

    def join(self):
        """For Popen's preexec_fn: the child moves itself in before it runs the program."""
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs"), "w") as procs:
                procs.write(str(os.getpid()))

    def seconds(self, pid):
        if not self.path:
            return cpu_seconds(pid)
        with open(os.path.join(self.path, self.usage)) as usage:
            text = usage.read()
        if self.usage == "cpuacct.usage":
            return int(text) / 1e9
        return int(re.search(r"usage_usec (\d+)", text).group(1)) / 1e6

    def remove(self):
        if self.path:
            try:
                os.rmdir(self.path)
            except OSError:
                pass


def memory_kib(pid, field):
    """A process's memory figure from /proc (`VmHWM`: its peak resident, `VmRSS`: resident now), in KiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def peak_memory_kib(pid):
    return memory_kib(pid, "VmHWM")


def measure_process(process, seconds, group, warmup=5):
    time.sleep(warmup)
    start = group.seconds(process.pid)
    time.sleep(seconds)
    used = group.seconds(process.pid) - start
    return used * 60 / seconds


def start_pulse(work, sinks=("bench",), modules=()):
    """A PulseAudio server of the bench's own with a null sink per name (and `modules`, each a
    module and its arguments, loaded after them); returns it and its address."""
    runtime = os.path.join(work, "pulse-" + "-".join(sinks))
    os.makedirs(runtime, exist_ok=True)
    socket_path = os.path.join(runtime, "native")
    if os.path.exists(socket_path):
        os.remove(socket_path)  # an earlier server's: the wait below is for this one's
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, HOME=runtime)
    server = subprocess.Popen(["pulseaudio", "--daemonize=no", "-n", "--exit-idle-time=-1", "--use-pid-file=no"]
                              + [f"--load=module-null-sink sink_name={sink} rate=44100 channels=2" for sink in sinks]
                              + [f"--load={module}" for module in modules]
                              + [f"--load=module-native-protocol-unix socket={socket_path} auth-anonymous=1"],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(socket_path):
        time.sleep(0.05)
    return server, "unix:" + socket_path


# --- Command latency -------------------------------------------------------------------------

LATENCY_ITEMS = ["latency-a2.flac", "latency-b2.flac"]  # "2": frames numbered on the right channel
# The right sample of a second's frame f is f - FRAME_CODE_OFFSET.
FRAME_CODE_OFFSET = 22050


def latency_items():
    """Two 30 s items whose samples say where they are: in second s of item k every left sample is
    k * 1000 + 10 * s, and the right sample of the second's frame f is f - 22050, so that the first
    frame of an effect that comes out tells how many of the effect's first frames did not."""
    paths = []
    for code, name in enumerate(LATENCY_ITEMS, start=1):
        path = os.path.join(AUDIO, name)
        if not os.path.exists(path):
            wav = os.path.join(AUDIO, "latency.wav")
            second_right = array.array("h", range(-FRAME_CODE_OFFSET, 44100 - FRAME_CODE_OFFSET))
            with wave.open(wav, "wb") as output:
                output.setnchannels(2)
                output.setsampwidth(2)
                output.setframerate(44100)
                for second in range(30):
                    frames = array.array("h", [code * 1000 + 10 * second]) * (2 * 44100)
                    frames[1::2] = second_right
                    output.writeframes(frames.tobytes())
            run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", wav, "-c:a", "flac", path])
            os.remove(wav)
        paths.append(path)
    return paths


class Listener:
    """Finds the first frame, heard at or after a command, whose left sample satisfies a test, and
    reads from its samples how many frames of the effect came before it (see `latency_items`)."""

    def __init__(self, rate=44100):
        self.rate = rate
        self.lock = threading.Lock()
        self.watch = None
        self.found = threading.Event()

    def hear(self, left, right, first_heard_ns, spread=True):
        with self.lock:
            if self.watch is None or self.watch["heard"] is not None:
                return
            for index, sample in enumerate(left):
                heard = first_heard_ns + (index * 1_000_000_000 // self.rate if spread else 0)
                if heard >= self.watch["after"] and self.watch["test"](sample):
                    self.watch["heard"] = heard
                    # Whole seconds past the effect's first one, then frames into this one.
                    origin = sample // 1000 * 1000 if self.watch["origin"] is None else self.watch["origin"]
                    self.watch["skipped"] = (sample - origin) // 10 * self.rate + right[index] + FRAME_CODE_OFFSET
                    self.found.set()
                    return

    def arm(self, test, after, origin=None):
        """Watches for the first frame heard at or after `after` (monotonic ns) that passes `test`;
        the effect starts at frame 0 of the second whose left sample is `origin` (default: the start of that frame's item)."""
        with self.lock:
            self.watch = {"after": after, "test": test, "heard": None, "skipped": None, "origin": origin}
            self.found.clear()

    def effect(self, timeout=5):
        """Waits for the armed watch: the milliseconds from its `after` to the frame and the frames of
        the effect before it (that the recording lacks), or (None, None)."""
        heard = self.watch["heard"] if self.found.wait(timeout) else None
        with self.lock:
            after, skipped, self.watch = self.watch["after"], self.watch["skipped"], None
        return (None, None) if heard is None else ((heard - after) / 1e6, skipped)

    def milliseconds(self, timeout=5):
        """The milliseconds of `effect`, or None."""
        return self.effect(timeout)[0]

    def measure(self, test, command, origin):
        """Runs `command`; `effect()` for the first frame passing `test`, the effect starting at `origin` (see `arm`)."""
        self.arm(test, time.monotonic_ns(), origin)
        command()
        return self.effect()


def read_frames(stream, listener):
    """Feeds s16le stereo from `stream` (a file descriptor) to `listener`, each frame timed by the arrival of its chunk."""
    pending = b""
    while True:
        ready, _, _ = select.select([stream], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(stream, 65536)
        except BlockingIOError:
            continue  # a non-blocking fifo can be reported ready with nothing to read
        arrived = time.monotonic_ns()
        if not chunk:
            return
        pending += chunk
        frames = len(pending) // 4
        if frames == 0:
            continue
        samples = array.array("h", pending[:frames * 4])
        pending = pending[frames * 4:]
        # Every frame counts as out when its chunk arrived: a writer may hand over a burst at once.
        listener.hear(samples[0::2], samples[1::2], arrived, spread=False)


def record_monitor(listener, env, sink="bench"):
    recorder = subprocess.Popen(["parec", "-d", sink + ".monitor", "--format=s16le", "--rate=44100", "--channels=2", "--raw",
                                 "--latency-msec=5"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    threading.Thread(target=read_frames, args=(recorder.stdout.fileno(), listener), daemon=True).start()
    return recorder


def in_item(code):
    return lambda sample: code * 1000 <= sample < code * 1000 + 600


def median(values):
    return round(statistics.median(values), 1) if values else None


# --- `serve` and the speakers ----------------------------------------------------------------

class EventClients:
    """Many clients holding a stream open: each socket's bytes are read on one thread, and the
    first time a marker appears after `expect()` is recorded per client."""

    def __init__(self, sockets, marker):
        self.sockets = sockets
        self.marker = marker
        self.buffers = {sock: b"" for sock in sockets}
        self.arrivals = {}
        self.lock = threading.Lock()
        self.selector = selectors.DefaultSelector()
        for sock in sockets:
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ)
        self.running = True
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def expect(self):
        with self.lock:
            self.arrivals = {}
            for sock in self.sockets:
                self.buffers[sock] = b""

    def read(self):
        while self.running:
            for key, _ in self.selector.select(timeout=0.1):
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                now = time.monotonic()
                with self.lock:
                    self.buffers[key.fileobj] += data
                    if key.fileobj not in self.arrivals and self.marker in self.buffers[key.fileobj]:
                        self.arrivals[key.fileobj] = now

    def wait_all(self, timeout=5):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.arrivals) == len(self.sockets):
                    return dict(self.arrivals)
            time.sleep(0.001)
        raise RuntimeError(f"only {len(self.arrivals)} of {len(self.sockets)} clients got the event")

    def close(self):
        self.running = False
        self.thread.join()
        for sock in self.sockets:
            sock.close()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def paced(count, rate, request):
    """Sends `count` requests at `rate` per second; returns each one's latency in ms."""
    latencies = []
    start = time.monotonic()
    for index in range(count):
        delay = start + index / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sent = time.monotonic()
        request(index)
        latencies.append((time.monotonic() - sent) * 1000)
    return latencies


def port_from_log(path, pattern, what, timeout=30):
    """The port a started program logs (the first group of `pattern` in the file at `path`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(pattern, open(path).read())
        if match:
            return int(match.group(1))
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start: " + open(path).read())


def http_caller(port, address="127.0.0.1", token=None):
    """A function that sends one JSON request to `longform serve` on `address`:`port` (with its
    `token`, which an address other than loopback needs) and returns its JSON answer."""
    connection = http.client.HTTPConnection(address, port)
    authorization = {"Authorization": f"Bearer {token}"} if token else {}

    def call(method, path, body=None):
        connection.request(method, path, body=json.dumps(body) if body is not None else None,
                           headers=dict(authorization, **({"Content-Type": "application/json"} if body is not None else {})))
        response = connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]}")
        return json.loads(data) if data else None
    return call


SPEAKER_ARGUMENTS = []  # given to every speaker the bench starts (`--speaker-verbose`)
SPEAKER_CODEC = None  # the codec of every speaker route it starts (`--speaker-codec`; None: the route's default)
START_STATE_KEPT = False  # whether each room of the start figure keeps its speaker's state from one start to the next (`--start-state kept`)


def speaker_route(addresses):
    """The `speaker:` route to `addresses` (HOST:PORT each), in `SPEAKER_CODEC`."""
    return "speaker:" + ",".join(addresses) + (f"?codec={SPEAKER_CODEC}" if SPEAKER_CODEC else "")


def start_speaker(work, env, name, route, options=(), address="127.0.0.1", port=0, state=None):
    """A `longform speaker` on `port` (0: a free one) of `address` playing to `route`, with
    `SPEAKER_ARGUMENTS`, keeping its devices' rates in `state` (None: a directory of its own, as a
    new user's first start); returns the process and its port."""
    log = os.path.join(work, f"speaker-{name}.log")
    state = state or os.path.join(work, f"speaker-state-{name}")
    process = subprocess.Popen([LONGFORM, "speaker", "--listen", f"{address}:{port}", "--route", route, "--name", name, "--state", state]
                               + list(options) + SPEAKER_ARGUMENTS,
                               env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        return process, port_from_log(log, r"listening on " + re.escape(address) + r":(\d+)", "longform speaker")
    except Exception:
        process.kill()
        raise


SENDER_NAMESPACE = "lf-bench-sender"
SENDER_LINK = ("lfbench0", "lfbench1", "10.231.0.1", "10.231.0.2")
SENDER_SUBNET = "10.231.0.0/30"


class SenderHost:
    """The sender on a host of its own, a network namespace joined to this one by a veth link, so
    that the speakers' clock requests reach it only through `scripts/impair`: the speakers, on
    loopback here, ask the timing port at 127.0.0.1, where the proxy listens and relays to the
    sender's namespace; the sender reaches each speaker through the proxy's TCP relays on the link."""

    def __init__(self):
        here, inside, self.address, self.sender_address = SENDER_LINK
        self.close()
        for command in [["netns", "add", SENDER_NAMESPACE], ["link", "add", here, "type", "veth", "peer", "name", inside],
                        ["link", "set", inside, "netns", SENDER_NAMESPACE], ["addr", "add", self.address + "/30", "dev", here],
                        ["link", "set", here, "up"], ["-n", SENDER_NAMESPACE, "addr", "add", self.sender_address + "/30", "dev", inside],
                        ["-n", SENDER_NAMESPACE, "link", "set", inside, "up"], ["-n", SENDER_NAMESPACE, "link", "set", "lo", "up"],
                        # While the link is cut its route goes: this one then drops what is sent to the
                        # namespace, as a pulled cable would, rather than the default route taking it.
                        ["route", "add", "blackhole", SENDER_SUBNET, "metric", "4000"]]:
            run(["ip"] + command)
        self.wrapper = ["ip", "netns", "exec", SENDER_NAMESPACE]

    def cut(self):
        """Nothing passes the link either way, as with a pulled cable: no end hears of it from the
        other (this side's sends meet the blackhole route, the namespace's find no route)."""
        run(["ip", "link", "set", SENDER_LINK[0], "down"])

    def restore(self):
        run(["ip", "link", "set", SENDER_LINK[0], "up"])

    def close(self):
        subprocess.run(["ip", "route", "del", "blackhole", SENDER_SUBNET], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "link", "del", SENDER_LINK[0]], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "del", SENDER_NAMESPACE], stderr=subprocess.DEVNULL)


class ImpairedSender:
    """The sender on a host of its own (`SenderHost`) behind `scripts/impair`, each leg of every
    clock exchange and every TCP chunk to the speakers on `ports` held `jitter_ms` ± `jitter_ms`,
    and with `rate_mbit` each direction of the link limited to that rate: the sender's command
    runs behind `wrapper`, names the speakers by `route` and takes `env`."""

    def __init__(self, ports, jitter_ms, rate_mbit=None):
        self.host = SenderHost()
        timing_port = free_port()
        relays = [argument for port in ports for argument in ["--tcp", f"{self.host.address}:{port}=127.0.0.1:{port}"]]
        try:
            self.process = start_impair(relays + ["--udp", f"127.0.0.1:{timing_port}={self.host.sender_address}:{timing_port}"], jitter_ms, rate_mbit)
        except BaseException:
            self.host.close()
            raise
        self.wrapper = self.host.wrapper
        self.addresses = [f"{self.host.address}:{port}" for port in ports]
        self.route = speaker_route(self.addresses)
        self.env = {"LONGFORM_SPEAKER_TIMING_PORT": str(timing_port)}

    def close(self):
        self.process.terminate()
        self.process.wait()
        self.host.close()


def start_impair(relays, jitter_ms=0, rate_mbit=None):
    """`scripts/impair` with `relays` (its --tcp and --udp arguments), each chunk held `jitter_ms`
    ± `jitter_ms` and, with `rate_mbit`, the link toward each host at that rate; returns it once
    it is ready (the caller terminates it)."""
    process = subprocess.Popen([os.path.join(ROOT, "scripts", "impair"), "--delay", f"{jitter_ms:g}", "--jitter", f"{jitter_ms:g}"]
                               + (["--rate", f"{rate_mbit:g}"] if rate_mbit else []) + relays, stdout=subprocess.PIPE, text=True)
    if process.stdout.readline().strip() != "ready":
        process.kill()
        process.wait()
        raise RuntimeError("scripts/impair did not start")
    return process


def link_bytes():
    """Bytes the link from the sender's namespace carried so far, each way (this side's counters:
    received from the namespace, sent to it)."""
    def read(name):
        with open(f"/sys/class/net/{SENDER_LINK[0]}/statistics/{name}") as file:
            return int(file.read())
    return read("rx_bytes"), read("tx_bytes")


class LinkLoad:
    """How busy the link from the sender's namespace was, sampled every 20 ms from its counters
    while it runs: `before(seconds)` is the share of `rate_mbit` it carried toward this side over
    the last `seconds` (a fill in progress shows as near 1)."""

    def __init__(self, rate_mbit):
        self.bytes_per_second = rate_mbit * 125_000
        self.samples = [(time.monotonic(), link_bytes()[0])]
        self.lock = threading.Lock()
        self.is_running = True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def sample(self):
        while self.is_running:
            time.sleep(0.02)
            try:
                reading = (time.monotonic(), link_bytes()[0])
            except OSError:  # the link is gone: the run is ending
                return
            with self.lock:
                self.samples.append(reading)

    def before(self, seconds):
        now = time.monotonic()
        with self.lock:
            last = self.samples[-1]
            first = next((sample for sample in self.samples if sample[0] >= now - seconds), last)
        return round((last[1] - first[1]) / (self.bytes_per_second * (last[0] - first[0])), 2) if last[0] > first[0] else None

    def close(self):
        self.is_running = False
        self.thread.join()


def speaker_sender(command, env, ports, jitter_ms, is_impaired=False, rate_mbit=None):
    """A sender's `command` on a `speaker:` route to the speakers on `ports` here: on loopback, or
    with `jitter_ms` (or `is_impaired`, or a link's `rate_mbit`) behind an `ImpairedSender`, which
    the caller closes. Returns the command, its environment and that sender (None on loopback)."""
    if not jitter_ms and not is_impaired and not rate_mbit:
        return command + ["--route", speaker_route(f"127.0.0.1:{port}" for port in ports)], dict(env), None
    impaired = ImpairedSender(ports, jitter_ms, rate_mbit)
    return impaired.wrapper + command + ["--route", impaired.route], dict(env, **impaired.env), impaired


def free_port(kind=socket.SOCK_DGRAM):
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def sync_music(items, work, seconds):
    """The test music's items one after another, as long as the run, the same in both channels
    (each speaker of the pair plays its own channel of it); returns the WAV's path."""
    music = os.path.join(work, f"sync-music-{seconds}.wav")
    if not os.path.exists(music):
        inputs = [argument for item in items for argument in ["-i", item]]
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + inputs + ["-t", str(seconds + 10), "-filter_complex",
                        "".join(f"[{index}:a]" for index in range(len(items))) + f"concat=n={len(items)}:v=0:a=1,pan=stereo|c0=c0|c1=c0[out]",
                        "-map", "[out]", "-ar", "44100", "-c:a", "pcm_s16le", music], check=True)
    return music


def sync_pcm(items, work, seconds):
    """`sync_music` as raw 16-bit stereo (Snapcast's file source reads that); returns its path."""
    pcm = os.path.join(work, f"sync-music-{seconds}.pcm")
    if not os.path.exists(pcm):
        run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", sync_music(items, work, seconds), "-f", "s16le", "-c:a", "pcm_s16le", pcm])
    return pcm


def pair_offsets(recording):
    """The offset between the monitor's channels, one figure per second of music (µs; positive:
    the right speaker plays later), each the peak of the cross-correlation, refined to a fraction
    of a sample by a parabola through it and its neighbours."""
    import numpy
    samples = numpy.frombuffer(open(recording, "rb").read(), dtype="<i2").astype(numpy.float64).reshape(-1, 2)
    left, right = samples[:, 0], samples[:, 1]
    start = int(numpy.argmax(numpy.abs(left) > 100)) + 44100  # a second into the music
    offsets = []
    window, reach = 44100, 441  # one-second windows; lags up to 10 ms either way
    for begin in range(start, len(left) - window - reach, window):
        a = left[begin:begin + window]
        b = right[begin - reach:begin + window + reach]
        if numpy.std(a) < 50:
            continue
        size = 1 << (len(b) + len(a)).bit_length()
        correlation = numpy.fft.irfft(numpy.fft.rfft(b, size) * numpy.conj(numpy.fft.rfft(a, size)), size)[:2 * reach + 1]
        peak = int(numpy.argmax(correlation))
        if 0 < peak < 2 * reach:
            y0, y1, y2 = correlation[peak - 1], correlation[peak], correlation[peak + 1]
            fraction = 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2) if (y0 - 2 * y1 + y2) != 0 else 0
        else:
            fraction = 0
        offsets.append(float((peak + fraction - reach) / 44100 * 1e6))
    return offsets


def offset_figures(offsets):
    """Median, p99 and worst of the absolute offsets, over the whole run and once settled (after
    the first minute; the start is a figure of its own, the worst of the first 60 windows)."""
    absolute = sorted(abs(value) for value in offsets)
    settled = sorted(abs(value) for value in offsets[60:])
    return {"windows": len(offsets),
            "median_abs_offset_us": round(statistics.median(absolute), 1) if absolute else None,
            "p99_abs_offset_us": round(percentile(absolute, 0.99), 1) if absolute else None,
            "max_abs_offset_us": round(max(absolute), 1) if absolute else None,
            "mean_offset_us": round(statistics.mean(offsets), 1) if offsets else None,
            "settled_median_abs_offset_us": round(statistics.median(settled), 1) if settled else None,
            "settled_p99_abs_offset_us": round(percentile(settled, 0.99), 1) if settled else None,
            "settled_max_abs_offset_us": round(max(settled), 1) if settled else None,
            "first_minute_max_abs_offset_us": round(max(abs(value) for value in offsets[:60]), 1) if offsets else None}


def describe_offsets(figures):
    return (f"{figures['windows']} one-second windows: offset median {figures['median_abs_offset_us']} µs, "
            f"p99 {figures['p99_abs_offset_us']} µs, worst {figures['max_abs_offset_us']} µs; after the first minute: median "
            f"{figures['settled_median_abs_offset_us']} µs, p99 {figures['settled_p99_abs_offset_us']} µs, worst {figures['settled_max_abs_offset_us']} µs")


class Recording:
    """parec on a sink's monitor into a raw 16-bit stereo file. With a short latency
    (`latency_msec`) the file's size tells how far the recording has got: the frame a moment of
    the bench falls on."""

    def __init__(self, address, work, name, sink="bench", latency_msec=20):
        self.path = os.path.join(work, f"{name}.raw")
        latency = [f"--latency-msec={latency_msec}"] if latency_msec else []
        self.process = subprocess.Popen(["parec", "--server", address, "-d", f"{sink}.monitor", "--raw", "--format=s16le", "--rate=44100",
                                         "--channels=2"] + latency + [self.path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def frame(self):
        return os.path.getsize(self.path) // 4 if os.path.exists(self.path) else 0

    def stop(self):
        self.process.kill()
        self.process.wait()


FILL_LINE = r"filled [\d.]+ s ahead; [\d.]+ s of audio sent in ([\d.]+) s \((\d+)× real time\)"  # the speaker route's log


# --- Speakers: command latency beside Snapcast ----------------------------------------------

ROOMS = ["room1", "room2", "room3"]


class Rooms:
    """Three rooms, each a null sink whose monitor parec records into a Listener of its own: a
    command's effect is done when it is heard in every room."""

    def __init__(self, env):
        self.listeners = [Listener() for _ in ROOMS]
        self.recorders = [record_monitor(listener, env, room) for listener, room in zip(self.listeners, ROOMS)]

    def measure(self, test, command):
        """Runs `command`; the milliseconds until every room has heard a frame passing `test`, or None."""
        start = time.monotonic_ns()
        for listener in self.listeners:
            listener.arm(test, start)
        command()
        heard = [listener.milliseconds() for listener in self.listeners]
        return None if None in heard else max(heard)

    def close(self):
        for recorder in self.recorders:
            recorder.kill()
            recorder.wait()


def room_commands(rooms, resume, pause, skip, restart, trials, load=None):
    """Pause, resume and skip, each timed to its effect in every room: silence, the music again,
    the next item. `restart` plays the first item from its start again after each skip. Given a
    `LinkLoad`, each command's "NAME_link_load" is the share of the link's rate it carried over
    the half second before the command (the command then queued behind that much)."""
    results = {"pause": [], "play": [], "skip": []}
    loads = {name: [] for name in results}

    def measure(name, test, command):
        if load:
            loads[name].append(load.before(0.5))
        results[name].append(rooms.measure(test, command))
    restart()
    time.sleep(4)
    for _ in range(trials):
        measure("pause", lambda sample: sample == 0, pause)
        time.sleep(2)
        measure("play", lambda sample: sample != 0, resume)
        time.sleep(2)
        measure("skip", in_item(2), skip)
        time.sleep(0.5)
        restart()
        time.sleep(3)
    figures = {name: [round(value, 1) for value in values if value is not None] for name, values in results.items()}
    return dict(figures, **{name + "_link_load": values for name, values in loads.items() if load})


# --- Speakers: the longest cut survived ----------------------------------------------------

GAP_FRAMES = 441  # 10 ms of digital silence in both channels is a gap a listener hears
AFTER_RESTORE_SECONDS = 30  # how long a cut link's player is given to sound again


def silences(path, channels=2, minimum=GAP_FRAMES):
    """The (first, end) frames of each run of at least `minimum` frames of silence (every channel
    within ±1) in a raw or WAV 16-bit file, and its length in frames."""
    import numpy
    data = open(path, "rb").read()
    if data[:4] == b"RIFF":  # a WAV file (16-bit PCM, as the wav route writes): its samples follow the "data" chunk's header
        start = data.find(b"data", 12)
        data = data[start + 8:] if start >= 0 else b""
    samples = numpy.frombuffer(data[:len(data) // 2 * 2], dtype="<i2")
    samples = samples[:len(samples) // channels * channels].reshape(-1, channels)
    quiet = numpy.concatenate([[False], numpy.all(numpy.abs(samples.astype(numpy.int32)) <= 1, axis=1), [False]])
    edges = numpy.flatnonzero(quiet[1:] != quiet[:-1])
    runs = [(int(first), int(end)) for first, end in zip(edges[0::2], edges[1::2]) if end - first >= minimum]
    return runs, len(samples)


def cut_figures(path, cut, restore):
    """What the recording shows of a cut from frame `cut` to frame `restore`: the seconds played
    on after the cut before the first gap (None: no gap until the link came back), the seconds from
    the restore to sound again, and the gaps before the cut (the measure is void if any)."""
    runs, length = silences(path)
    runs = [run for run in runs if run[0] > 0]  # the silence before the music starts
    before = [run for run in runs if run[0] < cut]
    after = [run for run in runs if run[1] > cut]
    # The first gap that starts after the cut and before the restore (one already under way at the
    # cut is counted before it, and voids the measure).
    after = [run for run in after if run[0] >= cut]
    dry = after[0] if after and after[0][0] < restore else None
    back = None
    if dry is not None and dry[1] < length:
        back = max(0, dry[1] - restore) / 44100
    return {"cut_seconds": round((restore - cut) / 44100, 1),
            "played_on_seconds": round((dry[0] - cut) / 44100, 2) if dry else None,
            "sound_again_after_restore_seconds": round(back, 2) if back is not None else None,
            "gaps_before_cut": len(before), "gaps_after_recovery": len(after) - (1 if dry else 0)}


def wait_for_log(path, pattern, what, timeout):
    """The first match of `pattern` in the log at `path`, waiting up to `timeout` seconds for it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(pattern, open(path).read()) if os.path.exists(path) else None
        if match:
            return match
        time.sleep(0.2)
    raise RuntimeError(f"{what}: no line matching {pattern!r} in {path} within {timeout} s")


class CutRun:
    """What both cut figures share: a PulseAudio server here, the sender's namespace, the processes
    started and the recording of the sink; `cut_link` cuts the link for a while and restores it.
    Everything is stopped on leaving, and `figures` then measures the recording."""

    def __init__(self, work):
        self.server, self.address = start_pulse(work)
        self.env = dict(os.environ, PULSE_SERVER=self.address)
        self.recording = None
        self.processes = []
        self.moments = None
        try:
            self.host = SenderHost()
        except BaseException:
            self.server.kill()
            self.server.wait()
            raise

    def __enter__(self):
        return self

    def cut_link(self, seconds):
        """Cuts the link for `seconds`, restores it, and lets the players go on for `AFTER_RESTORE_SECONDS`."""
        cut = self.recording.frame()
        self.host.cut()
        time.sleep(seconds)
        restore = self.recording.frame()
        self.host.restore()
        time.sleep(AFTER_RESTORE_SECONDS)
        self.moments = (cut, restore)

    def __exit__(self, *exception):
        if self.recording:
            self.recording.stop()
        for process in reversed(self.processes):
            process.kill()
            process.wait()
        self.host.close()
        self.server.kill()
        self.server.wait()

    def figures(self):
        return cut_figures(self.recording.path, *self.moments)


# --- Speakers: how many one sender feeds ----------------------------------------------------

def gapless_outputs(paths, channels=2):
    """How many of the raw or WAV outputs hold sound from their first to their last frame without a
    gap, and the shortest stretch of sound among them (s)."""
    whole, shortest = 0, None
    for path in paths:
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            shortest = 0  # a speaker that wrote nothing played nothing
            continue
        runs, length = silences(path, channels)
        inner = [run for run in runs if run[0] > 0 and run[1] < length]
        first = runs[0][1] if runs and runs[0][0] == 0 else 0
        last = runs[-1][0] if runs and runs[-1][1] == length else length
        whole += not inner and last > first
        sound = max(0, last - first) / 44100
        shortest = sound if shortest is None else min(shortest, sound)
    return whole, round(shortest or 0, 1)
