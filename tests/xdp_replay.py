#!/usr/bin/python3
"""xdp_replay.py IFNAME CORPUS_DIR SRC_MAC DST_MAC SRC_IP DST_IP: bad input
for `switchd --io xdp` (tests/xdp.sh).  Sends, out of IFNAME (AF_PACKET):
every frame of the switch fuzz corpus (records [ctl][len_hi][len_lo][frame],
fuzz/fuzz_switch.c), every wire corpus input as the payload of a UDP
datagram to the InArt port, and a valid IPv4/UDP frame cut at every length,
with a bad checksum, IHL 6..15, a total length past the frame, TTL 0 and 1,
UDP length 0 and past the datagram, VLAN-tagged.  Prints how many frames
it sent.  Standard library only."""
import os
import socket
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4_udp(smac, dmac, sip, dip, dport, payload, ttl=64, ihl=5, tot=None, ulen=None):
    udp = struct.pack("!HHHH", 40000, dport, ulen if ulen is not None else 8 + len(payload), 0)
    opts = b"\0" * (4 * (ihl - 5))
    total = tot if tot is not None else 4 * ihl + len(udp) + len(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total & 0xFFFF, 0, 0x4000, ttl, 17, 0,
                      sip, dip) + opts
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return dmac + smac + b"\x08\x00" + hdr + udp + payload


def corpus_switch(d):
    out = []
    for name in sorted(os.listdir(d)):
        b = open(os.path.join(d, name), "rb").read()
        i = 0
        while i + 3 <= len(b):
            n = b[i + 1] << 8 | b[i + 2]
            out.append(b[i + 3:i + 3 + n])
            i += 3 + n
    return out


def main():
    ifname, corpus, smac, dmac, sip, dip = sys.argv[1:7]
    smac = bytes.fromhex(smac.replace(":", ""))
    dmac = bytes.fromhex(dmac.replace(":", ""))
    sip, dip = socket.inet_aton(sip), socket.inet_aton(dip)
    frames = corpus_switch(os.path.join(corpus, "switch"))
    wdir = os.path.join(corpus, "wire")
    for name in sorted(os.listdir(wdir)):
        frames.append(ipv4_udp(smac, dmac, sip, dip, 47470, open(os.path.join(wdir, name), "rb").read()))
    good = ipv4_udp(smac, dmac, sip, dip, 47470, b"\x00" * 40)
    plain = ipv4_udp(smac, dmac, sip, dip, 9, b"x" * 40)
    for f in (good, plain):
        frames += [f[:n] for n in range(14, len(f))]
        bad = bytearray(f)
        bad[24] ^= 0xFF  # header checksum
        frames.append(bytes(bad))
    for ihl in range(6, 16):
        frames.append(ipv4_udp(smac, dmac, sip, dip, 9, b"y" * 20, ihl=ihl))
    for tot in (0, 19, 20, 1500, 65535):
        frames.append(ipv4_udp(smac, dmac, sip, dip, 9, b"z" * 20, tot=tot))
    for ttl in (0, 1):
        frames.append(ipv4_udp(smac, dmac, sip, dip, 9, b"t" * 20, ttl=ttl))
    for ulen in (0, 7, 1000):
        frames.append(ipv4_udp(smac, dmac, sip, dip, 9, b"u" * 20, ulen=ulen))
        frames.append(ipv4_udp(smac, dmac, sip, dip, 47470, b"u" * 20, ulen=ulen))
    frames.append(plain[:12] + b"\x81\x00\x00\x05" + plain[12:])  # VLAN tag
    frames.append(dmac + smac + b"\x86\xdd" + b"\0" * 60)  # IPv6
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    sent = 0
    for f in frames:
        if len(f) < 14:
            continue
        try:
            s.send(f)
            sent += 1
        except OSError:
            pass
    print(sent)


if __name__ == "__main__":
    main()
