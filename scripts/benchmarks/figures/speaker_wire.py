"""Speakers on a link of limited rate: `longform play` in a network namespace behind
`scripts/impair --rate` sends the same minutes of the bench's music to one `longform speaker`
holding all of them, once per codec (`speaker:…?codec=float|pcm|flac`). The figures per codec are
the bytes that crossed the link (IP and TCP headers included, read from the link's counters), how
long the fill took, the speaker's resident memory once it holds everything (its own, and the
libraries' file pages), and its CPU over its first and its second minute (the first has the
fill and the clock exchange's first 10 s, at two hundred requests a second until the network is
seen quiet, forty after; it plays to a WAV file, as the snapclient beside it plays to a file); the
peer is a snapclient of snapserver's default codec, FLAC, on the same music, over its first
minute and over the minute after its first 5 s (`peers/snapcast.py`)."""
import os, re, subprocess, time
from ..common import (
    LONGFORM, cpu_seconds, memory_kib, start_speaker, sync_music, sync_pcm, FILL_LINE, wait_for_log, ImpairedSender, link_bytes)
from ..peers.snapcast import snapcast_fan_out

CODECS = ("float", "pcm", "flac")


def longform_wire(work, music, codec, seconds, rate_mbit):
    """One codec: the fill of `seconds` of `music` over a `rate_mbit` link; the speaker's CPU over
    its first minute and its second, and its memory at the end of the first."""
    output = os.path.join(work, f"wire-{codec}.wav")
    started = time.monotonic()
    speaker, port = start_speaker(work, os.environ, f"wire-{codec}", "wav:" + output, ["--buffer", str(seconds + 30)])
    processes = [speaker]
    sender = ImpairedSender([port], 0, rate_mbit=rate_mbit)
    try:
        log = os.path.join(work, f"wire-{codec}-sender.log")
        received_before, sent_before = link_bytes()
        processes.append(subprocess.Popen(sender.wrapper + [LONGFORM, "play", "--lookahead", str(seconds), "--state", os.path.join(work, f"wire-{codec}-state"),
                                                             "--route", "speaker:" + ",".join(sender.addresses) + f"?codec={codec}", music],
                                          env=dict(os.environ, **sender.env), stdout=open(log, "w"), stderr=subprocess.STDOUT))
        fill = wait_for_log(log, FILL_LINE, "longform play", seconds)
        received, sent = link_bytes()
        time.sleep(max(0, started + 60 - time.monotonic()))
        first_minute = cpu_seconds(speaker.pid)
        resident, anonymous = memory_kib(speaker.pid, "VmRSS"), memory_kib(speaker.pid, "RssAnon")
        time.sleep(60)
        second_minute = cpu_seconds(speaker.pid) - first_minute
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()
        sender.close()
    return {"codec": codec, "fill_seconds": float(fill.group(1)), "link_bytes_to_speaker": received - received_before,
            "link_bytes_to_sender": sent - sent_before, "speaker_rss_mib": round(resident / 1024, 1),
            "speaker_anonymous_rss_mib": round(anonymous / 1024, 1), "speaker_cpu_seconds_first_minute": round(first_minute, 2),
            "speaker_cpu_seconds_per_minute": round(second_minute, 3)}


def speaker_wire(items, work, seconds=600, rate_mbit=50):
    """Each codec over the link, then a snapclient playing snapserver's FLAC for a minute (after
    the 5 s it is given to settle)."""
    music, pcm = sync_music(items, work, seconds + 60), sync_pcm(items, work, 300)
    pcm16 = seconds * 44_100 * 4
    results = {"seconds": seconds, "rate_mbit": rate_mbit, "pcm16_bytes": pcm16}
    for codec in CODECS:
        figures = longform_wire(work, music, codec, seconds, rate_mbit)
        figures["share_of_pcm16"] = round(figures["link_bytes_to_speaker"] / pcm16, 3)
        results[codec] = figures
        print(f"speakers over a {rate_mbit:g} Mbit/s link, {seconds} s as {codec}: {figures['link_bytes_to_speaker'] / 1e6:.1f} MB to the speaker "
              f"({figures['share_of_pcm16'] * 100:.1f} % of 16-bit PCM), {figures['link_bytes_to_sender'] / 1e6:.2f} MB back, filled in "
              f"{figures['fill_seconds']} s; the speaker holding it {figures['speaker_rss_mib']} MiB resident ({figures['speaker_anonymous_rss_mib']} MiB "
              f"its own), {figures['speaker_cpu_seconds_first_minute']} CPU s over its first minute, {figures['speaker_cpu_seconds_per_minute']} over "
              f"its second", flush=True)
    snapclient = snapcast_fan_out(work, pcm, 1, 60)
    results["snapclient_cpu_seconds_per_minute"] = snapclient["clients_cpu_seconds_per_minute"]
    results["snapclient_cpu_seconds_first_minute"] = snapclient["clients_cpu_seconds_first_minute"]
    results["fill_pcm/flac"] = round(results["pcm"]["fill_seconds"] / results["flac"]["fill_seconds"], 2)
    results["snapclient/flac_speaker_cpu"] = (round(snapclient["clients_cpu_seconds_per_minute"] / results["flac"]["speaker_cpu_seconds_per_minute"], 2)
                                              if results["flac"]["speaker_cpu_seconds_per_minute"] else None)
    print(f"speakers on the wire: FLAC {results['flac']['share_of_pcm16'] * 100:.1f} % of 16-bit PCM's bytes, its fill "
          f"{results['fill_pcm/flac']}× faster than 16-bit PCM's; speaker playing FLAC {results['flac']['speaker_cpu_seconds_per_minute']} CPU s a minute, "
          f"snapclient (FLAC) {results['snapclient_cpu_seconds_per_minute']}, snapclient/longform {results['snapclient/flac_speaker_cpu']}; "
          f"first minutes: FLAC speaker {results['flac']['speaker_cpu_seconds_first_minute']}, snapclient {results['snapclient_cpu_seconds_first_minute']}", flush=True)
    return results
