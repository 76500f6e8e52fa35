"""`longform serve`: the time from a playlist edit to its event reaching each of 100 event-stream
clients, and the latency of edits sent at 100 per second, alone and with the clients connected,
beside mpd's `idle` clients and its `addid`/`deleteid` (`peers/mpd.py`)."""
import os, socket, subprocess, time
from ..common import LONGFORM, median, EventClients, percentile, paced, port_from_log, http_caller
from ..peers.mpd import mpd_server


def longform_server(items, work, clients, trials, edits):
    music = os.path.dirname(items[0])
    log = open(os.path.join(work, "serve.log"), "w")
    process = subprocess.Popen([LONGFORM, "serve", "--http", "127.0.0.1:0", "--state", os.path.join(work, "serve-state"), "--music", music,
                                "--route", "null", "--no-watch"], stdout=log, stderr=subprocess.STDOUT)
    try:
        port = port_from_log(log.name, r"serving http://127\.0\.0\.1:(\d+)/", "longform serve")
        call = http_caller(port)
        call("POST", "/api/playlist/items", {"items": [{"path": os.path.basename(item)} for item in items]})
        pending = []

        def edit(index):
            if index % 2 == 0:
                pending.append(call("POST", "/api/playlist/items", {"items": [{"path": os.path.basename(items[index % len(items)])}], "index": 0})["items"][0]["id"])
            else:
                call("DELETE", "/api/playlist/items/" + pending.pop())
        alone = paced(edits, 100, edit)
        sockets = []
        for _ in range(clients):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
            sockets.append(sock)
        readers = EventClients(sockets, b"event: playlist\n")
        time.sleep(1)  # every client has its first `state` event
        fanout = []
        for trial in range(trials):
            readers.expect()
            sent = time.monotonic()
            added = call("POST", "/api/playlist/items", {"items": [{"path": os.path.basename(items[trial % len(items)])}]})
            arrivals = readers.wait_all()
            fanout.append(max(arrivals.values()) - sent)
            readers.expect()
            call("DELETE", "/api/playlist/items/" + added["items"][0]["id"])
            readers.wait_all()
        watched = paced(edits, 100, edit)
        readers.close()
        return [round(value * 1000, 2) for value in fanout], alone, watched
    finally:
        process.kill()
        process.wait()
        log.close()


def server_figures(items, work, clients=100, trials=20, edits=1000):
    results = {}
    for name, measure in [("longform", longform_server), ("mpd", mpd_server)]:
        fanout, alone, watched = measure(items, work, clients, trials, edits)
        results[name] = {"event_to_all_clients_ms_median": median(fanout), "event_to_all_clients_ms_max": max(fanout),
                         "edit_ms_p50": round(percentile(alone, 0.5), 2), "edit_ms_p99": round(percentile(alone, 0.99), 2),
                         f"edit_with_{clients}_clients_ms_p50": round(percentile(watched, 0.5), 2),
                         f"edit_with_{clients}_clients_ms_p99": round(percentile(watched, 0.99), 2)}
    ours, peer = results["longform"], results["mpd"]
    print(f"serve: an edit's event to all {clients} clients: longform {ours['event_to_all_clients_ms_median']} ms (max {ours['event_to_all_clients_ms_max']}), "
          f"mpd idle {peer['event_to_all_clients_ms_median']} ms (max {peer['event_to_all_clients_ms_max']}), "
          f"mpd/longform {round(peer['event_to_all_clients_ms_median'] / ours['event_to_all_clients_ms_median'], 2)} (goal: under 50 ms)", flush=True)
    print(f"serve: edits at 100/s: p99 longform {ours['edit_ms_p99']} ms, mpd {peer['edit_ms_p99']} ms, "
          f"mpd/longform {round(peer['edit_ms_p99'] / ours['edit_ms_p99'], 2)} (goal: p99 under 20 ms)", flush=True)
    key = f"edit_with_{clients}_clients_ms_p99"
    print(f"serve: edits at 100/s with the {clients} clients connected: p99 longform {ours[key]} ms, mpd {peer[key]} ms, "
          f"mpd/longform {round(peer[key] / ours[key], 2)}", flush=True)
    return results
