#!/usr/bin/env python3
"""forge.py: a host outside the jobs forging and replaying INA packets, for
the network-namespace tests (tests/netns.sh, tests/chaos.sh).

usage: forge.py SECONDS LABEL ITERS JOB:FAN_IN:PS:VICTIM...

For SECONDS, rounds 10 ms apart.  A round takes each iteration of ITERS
(comma-separated numbers; "r": one of 1, 2, 50, 100, 200, 2^30 at random),
chunks 0..3 and each target, and sends:
  - to PS: contributions as each rank alone and as all ranks (label LABEL --
    "r": a random one of 1..63 -- and label 0), and retransmissions (label 0);
  - to VICTIM: results "from" PS (a spoofed source, raw socket) and results
    from this host.
Everything is well formed (docs/wire.md): only where it comes from is wrong.
"""
import random
import socket
import struct
import sys
import time

PORT = 47470


def ina(flags, job, fan, label, it, seq, bits, vals):
    return (struct.pack("!BBBbIHHIIIHHI", 1, flags, 1, 16, job, 0, fan, label, it, seq,
                        seq % 64, len(vals), 0) + struct.pack("!Q", bits) +
            b"".join(struct.pack("!i", v) for v in vals))


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def ip_udp(src, dst, payload):
    udp = struct.pack("!HHHH", PORT, PORT, 8 + len(payload), 0) + payload
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + udp


def main():
    secs, label, iters = float(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
    targets = []
    for t in sys.argv[4:]:
        job, fan, ps, victim = t.split(":")
        targets.append((int(job), int(fan), ps, victim))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    end = time.time() + secs
    while time.time() < end:
        for i in iters:
            it = random.choice([1, 2, 50, 100, 200, 1 << 30]) if i == "r" else int(i)
            for seq in range(4):
                for job, fan, ps, victim in targets:
                    full = (1 << fan) - 1
                    lab = random.randrange(1, 64) if label == "r" else int(label)
                    for lb in (lab, 0):
                        for bits in [1 << r for r in range(fan)] + [full]:
                            u.sendto(ina(1, job, fan, lb, it, seq, bits, [10 ** 6] * 8),
                                     (ps, PORT))
                    u.sendto(ina(1 | 4, job, fan, 0, it, seq, full, [999] * 8), (ps, PORT))
                    raw.sendto(ip_udp(ps, victim, ina(2, job, fan, 0, it, seq, full, [777] * 8)),
                               (victim, 0))
                    u.sendto(ina(2, job, fan, 0, it, seq, full, [555] * 8), (victim, PORT))
        time.sleep(0.01)


main()
