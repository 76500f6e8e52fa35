"""Speakers one sender feeds: `longform play` on a `speaker:` route to more and more speakers, each
writing what it plays to a WAV file: the fill of the whole group, the sender's CPU and memory, the
speakers' CPU and how many played without a gap, beside snapserver feeding as many snapclients
(`peers/snapcast.py`)."""
import os, subprocess, time
from ..common import (
    speaker_route, LONGFORM, cpu_seconds, CPUGroup, peak_memory_kib, start_speaker, sync_music, sync_pcm, FILL_LINE, wait_for_log,
    gapless_outputs)
from ..peers.snapcast import snapcast_fan_out


# --- Speakers: how many one sender feeds ----------------------------------------------------

def longform_fan_out(work, music, count, seconds):
    """`longform play` feeding `count` speakers (each writing what it plays to a WAV file in real
    time): the fill of the whole group, then the sender's CPU over `seconds` of playing, and
    whether every speaker played without a gap."""
    processes, outputs, ports = [], [], []
    group = CPUGroup(f"fan-out-{count}")
    try:
        for index in range(count):
            output = os.path.join(work, f"fan-{count}-{index}.wav")
            process, port = start_speaker(work, os.environ, f"fan-{count}-{index}", "wav:" + output)
            processes.append(process)
            outputs.append(output)
            ports.append(port)
        log = os.path.join(work, f"fan-{count}-sender.log")
        sender = subprocess.Popen([LONGFORM, "play", "--state", os.path.join(work, f"fan-{count}-state"),
                                   "--route", speaker_route(f"127.0.0.1:{port}" for port in ports), music],
                                  stdout=open(log, "w"), stderr=subprocess.STDOUT, preexec_fn=group.join)
        processes.append(sender)
        fill = wait_for_log(log, FILL_LINE, "longform play", 300)
        time.sleep(5)  # settled, as snapserver's clients are given
        speakers_before = sum(cpu_seconds(process.pid) for process in processes[:-1])
        sender_before = group.seconds(sender.pid)
        time.sleep(seconds)
        sender_cpu = group.seconds(sender.pid) - sender_before
        speakers_cpu = sum(cpu_seconds(process.pid) for process in processes[:-1]) - speakers_before
        sender_rss = peak_memory_kib(sender.pid)
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()
        group.remove()
    whole, shortest = gapless_outputs(outputs)
    return {"speakers": count, "fill_seconds": float(fill.group(1)), "fill_rate_x_real_time": int(fill.group(2)),
            "sender_cpu_seconds_per_minute": round(sender_cpu / (seconds / 60), 3),
            "speakers_cpu_seconds_per_minute": round(speakers_cpu / (seconds / 60), 2), "sender_peak_rss_mib": round(sender_rss / 1024, 1),
            "gapless_speakers": whole, "shortest_sound_seconds": shortest}


def speaker_fan_out(items, work, counts, seconds=30):
    """One sender feeding more and more speakers on this machine, each count beside snapserver
    feeding as many clients, CPU measured over `seconds` of playing; a count stops the climb once
    any speaker played with a gap. The speakers share the machine's two cores with the sender."""
    music, pcm = sync_music(items, work, 300), sync_pcm(items, work, 300)
    results = []
    for count in counts:
        ours, theirs = longform_fan_out(work, music, count, seconds), snapcast_fan_out(work, pcm, count, seconds)
        ratio = round(theirs["server_cpu_seconds_per_minute"] / ours["sender_cpu_seconds_per_minute"], 2) if ours["sender_cpu_seconds_per_minute"] else None
        results.append({"longform": ours, "snapcast": theirs, "snapcast/longform_sender_cpu": ratio})
        print(f"speakers, one sender feeding {count}: longform filled them all in {ours['fill_seconds']} s ({ours['fill_rate_x_real_time']}× real time), "
              f"sender {ours['sender_cpu_seconds_per_minute']} CPU s a minute ({ours['sender_peak_rss_mib']} MiB), speakers "
              f"{ours['speakers_cpu_seconds_per_minute']} CPU s a minute in all, {ours['gapless_speakers']}/{count} played without a gap; "
              f"snapserver {theirs['server_cpu_seconds_per_minute']} CPU s a minute ({theirs['server_peak_rss_mib']} MiB), clients "
              f"{theirs['clients_cpu_seconds_per_minute']}, {theirs['gapless_clients']}/{count} without a gap; snapserver/longform sender CPU {ratio}", flush=True)
        if ours["gapless_speakers"] < count:
            break
    return results
