#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Where a TCG guest's vCPUs spend their time, sampled from outside.

perf inside these guests sees almost nothing but the idle loop, and the
guest kernel samples its busy time at the tick.  qemu's gdbstub
(tools/guest.sh --gdb) can stop the whole guest at any moment, between two
translated blocks, and tell each vCPU's registers.  Stopping it HZ times a
second and reading every vCPU's RIP gives a profile by wall time per
vCPU: a vCPU whose host thread was preempted counts where it stood.  For a
kernel RIP, the words on the stack that point into kernel text are kept
too: the guest kernel has no frame pointers, so this is a scan, not an
unwinder, and a "caller" can be stale.

  vcpu-prof.py sample PORT SECONDS HZ OUT
  vcpu-prof.py report KALLSYMS OUT [--top N] [--stacks SUBSTRING]

KALLSYMS is the guest's /proc/kallsyms read as root in the same boot (it
has the modules' symbols, and KASLR's offset).  bench/profile.sh does
both around one perftest pair.
"""
import bisect
import collections
import socket
import sys
import time

KERNEL = 0xffff800000000000
TEXT = 0xffffffff80000000


class Stub:
    """The few packets of gdb's remote protocol the sampler needs."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        # one small packet per request: Nagle would hold each back
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def recv(self):
        while True:
            i = self.buf.find(b"$")
            j = self.buf.find(b"#", i) if i >= 0 else -1
            if j >= 0 and len(self.buf) >= j + 3:
                data, self.buf = self.buf[i + 1:j], self.buf[j + 3:]
                self.s.sendall(b"+")
                return data.decode()
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("gdbstub closed the connection")
            self.buf += chunk

    def send(self, cmd):
        data = cmd.encode()
        self.s.sendall(b"$%s#%02x" % (data, sum(data) & 0xff))

    def cmd(self, cmd):
        self.send(cmd)
        return self.recv()


def sample(port, secs, hz, out):
    stub = Stub(port)
    stub.recv()             # qemu stops the guest when gdb attaches
    stub.cmd("qSupported")
    threads = []
    r = stub.cmd("qfThreadInfo")
    while r.startswith("m"):
        threads += r[1:].split(",")
        r = stub.cmd("qsThreadInfo")
    n = 0
    end = time.time() + secs
    with open(out, "w") as f:
        while True:
            for t in threads:
                stub.cmd("Hg" + t)
                regs = stub.cmd("g")
                # x86-64: 16 GPRs (RSP the 8th), then RIP, 8 bytes each
                rip = int.from_bytes(bytes.fromhex(regs[256:272]), "little")
                rsp = int.from_bytes(bytes.fromhex(regs[112:128]), "little")
                words = []
                if rip >= KERNEL:
                    m = stub.cmd("m%x,200" % rsp)
                    if m and not m.startswith("E"):
                        b = bytes.fromhex(m)
                        words = [int.from_bytes(b[i:i + 8], "little")
                                 for i in range(0, len(b) - 7, 8)]
                f.write("%s %x %s\n" % (t, rip, " ".join(
                    "%x" % w for w in words if w >= TEXT)))
            n += 1
            if time.time() >= end:
                break
            stub.send("c")
            time.sleep(1.0 / hz)
            stub.s.sendall(b"\x03")
            stub.recv()
    stub.send("c")          # leave it running
    time.sleep(0.2)
    print("%d samples of %d vCPUs" % (n, len(threads)), file=sys.stderr)


class Symbols:
    def __init__(self, path):
        syms = []
        for line in open(path):
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW" and int(p[0], 16):
                name = p[2] + (" " + p[3] if len(p) > 3 else "")
                syms.append((int(p[0], 16), name))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [s for _, s in syms]

    def __call__(self, addr):
        if addr < KERNEL:
            return "[user]"
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else "?"


def report(kallsyms, path, top, stacks):
    sym = Symbols(kallsyms)
    rows = []
    for line in open(path):
        p = line.split()
        rows.append((p[0], sym(int(p[1], 16)), p[2:]))
    cpus = sorted({t for t, _, _ in rows})
    idle = collections.Counter(t for t, s, _ in rows if "halt" in s)
    busy = [(t, s, st) for t, s, st in rows if "halt" not in s]
    print("%d samples; idle (halted) per vCPU: %s" % (len(rows), ", ".join(
        "%s %d%%" % (t, 100 * idle[t] // max(1, sum(1 for r in rows
                                                      if r[0] == t)))
        for t in cpus)))
    if not busy:
        return
    per = collections.Counter((t, s) for t, s, _ in busy)
    tot = collections.Counter(s for _, s, _ in busy)
    print("% of busy  samples  function   [per vCPU]")
    for s, v in tot.most_common(top):
        print("%9.1f %8d  %s   [%s]" % (100.0 * v / len(busy), v, s, " ".join(
            "%s:%d" % (t, per[(t, s)]) for t in cpus)))
    mods = collections.Counter()
    for s, v in tot.items():
        mods[s.split(" ")[1] if " " in s else
             "user" if s == "[user]" else "kernel"] += v
    print("by module, %% of busy: %s" % ", ".join(
        "%s %.1f" % (m, 100.0 * v / len(busy)) for m, v in mods.most_common()))
    if stacks:
        seen = collections.Counter()
        for _, s, st in busy:
            if stacks in s:
                callers = [sym(a) for a in (int(w, 16) for w in st)
                           if a >= TEXT and sym(a) != "?"][:6]
                seen[" < ".join(callers)] += 1
        print("stack words of the samples in %s (a scan: may be stale):"
              % stacks)
        for k, v in seen.most_common(12):
            print("%6d  %s" % (v, k or "(none)"))


def main(argv):
    if len(argv) == 5 and argv[0] == "sample":
        sample(int(argv[1]), float(argv[2]), float(argv[3]), argv[4])
        return 0
    if len(argv) >= 3 and argv[0] == "report":
        top, stacks, rest = 40, None, argv[3:]
        while rest:
            if rest[0] == "--top" and len(rest) > 1:
                top = int(rest[1])
            elif rest[0] == "--stacks" and len(rest) > 1:
                stacks = rest[1]
            else:
                break
            rest = rest[2:]
        if not rest:
            report(argv[1], argv[2], top, stacks)
            return 0
    print(__doc__.split("\n\n")[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
