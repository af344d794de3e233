#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Where the host's CPUs go during the wire benchmark.  The two guests run on
# the host's CPUs as threads of their qemus: one per vCPU ("CPU n/TCG"),
# the main loop, which carries the link and the virtio queues, and helpers
# (9p, RCU).  A guest's own clock tells only what that guest did; this tells
# what each of those threads took from the host while a program's packets
# flowed, so a figure can be read against what was left to earn it.
#
#   host_cpu.py sample FILE      every 0.2 s until killed, append to FILE
#                                "<time> <guest> <thread> <ticks>" for each
#                                thread of each guest's qemu (tools/guest.sh
#                                names them with -name debug-threads=on),
#                                and write the host's time to host-clock in
#                                each guest's /out, for the guest to set its
#                                windows' times by (its own clock starts from
#                                the emulated RTC, to the second)
#   host_cpu.py report FILE RESULTS
#                                for each "WINDOW <dev> <metric> <t0> <t1>"
#                                line of RESULTS (bench/guest-wire.sh; guest
#                                times, which "HOSTCLOCK <offset>" turns into
#                                the host's), the
#                                share of a host CPU each thread class took
#                                in that window, averaged over the rounds,
#                                and the host CPU time per MB moved
import collections
import os
import re
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def guests():
    """{pid: (guest name, its /out on the host)} of tools/guest.sh's qemus"""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if not argv[0].endswith(b"qemu-system-x86_64"):
            continue
        for a in argv:
            m = re.match(rb"file:(.*/([ab]))/console$", a)
            if m:
                found[pid] = (m.group(2).decode(), m.group(1).decode())
    return found


def thread_class(pid, tid, comm):
    if tid == pid:
        return "main"
    m = re.match(r"CPU (\d+)/TCG", comm)
    return "vcpu%s" % m.group(1) if m else "other"


def sample(path):
    known = {}
    with open(path, "a") as out:
        while True:
            now = time.time()
            lines = []
            # /proc is scanned again only until both guests are found, or
            # when one has gone: not five times a second on the host that
            # is being measured
            if len(known) < 2 or not all(os.path.exists("/proc/" + p) for p in known):
                known = guests()
            for pid, (name, out_dir) in known.items():
                try:
                    with open(out_dir + "/host-clock.tmp", "w") as f:
                        f.write("%.6f\n" % time.time())
                    os.rename(out_dir + "/host-clock.tmp", out_dir + "/host-clock")
                except OSError:
                    pass
                ticks = collections.Counter()
                try:
                    tids = os.listdir("/proc/%s/task" % pid)
                except OSError:
                    continue
                for tid in tids:
                    try:
                        with open("/proc/%s/task/%s/comm" % (pid, tid)) as f:
                            comm = f.read().strip()
                        with open("/proc/%s/task/%s/stat" % (pid, tid)) as f:
                            st = f.read().rsplit(")", 1)[1].split()
                    except OSError:
                        continue
                    # utime and stime: fields 14 and 15 of stat(5)
                    ticks[thread_class(pid, tid, comm)] += int(st[11]) + int(st[12])
                for cls, t in ticks.items():
                    lines.append("%.3f %s %s %d\n" % (now, name, cls, t))
            out.writelines(lines)
            out.flush()
            time.sleep(0.2)


def at(series, t):
    """a cumulative tick count at time t, interpolated"""
    prev = None
    for ts, v in series:
        if ts >= t:
            if prev is None:
                return None
            p_ts, p_v = prev
            return p_v + (v - p_v) * (t - p_ts) / (ts - p_ts)
        prev = (ts, v)
    return None


def report(path, results):
    series = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 4:
                series[(p[1], p[2])].append((float(p[0]), int(p[3])))
    bw = collections.defaultdict(list)
    share = collections.defaultdict(lambda: collections.defaultdict(list))
    order = []
    offset = None
    with open(results) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[0] == "HOSTCLOCK":
                offset = float(p[1])
            if len(p) == 4 and p[0] == "RESULT" and re.match(r"^[0-9.]+$", p[3]):
                bw[(p[1], p[2])].append(float(p[3]))
            if len(p) != 5 or p[0] != "WINDOW" or offset is None:
                continue
            dev, metric = p[1], p[2]
            t0, t1 = float(p[3]) + offset, float(p[4]) + offset
            if metric not in order:
                order.append(metric)
            got = {}
            for key, s in series.items():
                a, b = at(s, t0), at(s, t1)
                if a is not None and b is not None:
                    got["%s.%s" % key] = (b - a) / HZ / (t1 - t0) * 100
            if got:
                for k, v in got.items():
                    share[(dev, metric)][k].append(v)
    if not share:
        print("host CPU: no window was sampled")
        return
    cols = ["a.vcpu0", "a.vcpu1", "a.main", "b.vcpu0", "b.vcpu1", "b.main"]
    print("host CPU while the packets flowed, %% of one host CPU (%d CPUs);"
          " a serves, b is perftest's client" % os.cpu_count())
    print("%-22s %-6s" % ("metric", "dev") +
          "".join("%8s" % c for c in cols) + "%8s%8s %10s" % ("other", "total", "ms/MB"))
    for metric in order:
        per_mb = {}
        for dev in ("vhca0", "rxe0"):
            s = share.get((dev, metric))
            if not s:
                continue
            mean = {k: sum(v) / len(v) for k, v in s.items()}
            other = sum(v for k, v in mean.items() if k not in cols)
            total = sum(mean.values())
            mb = bw.get((dev, metric + "_MBps"))
            cost = ""
            if mb:
                rate = sum(mb) / len(mb)
                per_mb[dev] = total * 10 / rate  # ms of host CPU per MB
                cost = "%.1f" % per_mb[dev]
            print("%-22s %-6s" % (metric, dev) +
                  "".join("%8.0f" % mean.get(c, 0) for c in cols) +
                  "%8.0f%8.0f %10s" % (other, total, cost))
        if len(per_mb) == 2:
            print("%-22s %-6s %s" % (metric, "ratio",
                  "host CPU per MB, vhca/rxe: %.2f" % (per_mb["vhca0"] / per_mb["rxe0"])))


if __name__ == "__main__":
    if sys.argv[1:2] == ["sample"]:
        sample(sys.argv[2])
    elif sys.argv[1:2] == ["report"]:
        report(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: host_cpu.py sample FILE | report FILE RESULTS")
