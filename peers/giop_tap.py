#!/usr/bin/env python3
"""giop_tap.py -- a logging TCP proxy for GIOP, to capture wire bytes.

usage: giop_tap.py proxy LISTEN_PORT TARGET_HOST:TARGET_PORT LOGFILE [SECONDS]
       giop_tap.py decode LOGFILE

proxy: listens on 127.0.0.1:LISTEN_PORT, forwards every connection to the
target, and appends one JSON line per GIOP message to LOGFILE:
{"conn": k, "dir": "c2s" | "s2c", "hex": "..."} (c2s = from the side that
connected).  Exits after SECONDS (default 120).  Point a client at it by
making the server publish the proxy's port, e.g. omniORB's
  -ORBendPoint giop:tcp:127.0.0.1:S -ORBendPointPublish giop:tcp:127.0.0.1:P

decode: prints each logged message's header fields (byte order, GIOP
version, type, request id, operation, service context ids).
"""

import json
import socket
import struct
import sys
import threading
import time

TYPES = ["Request", "Reply", "CancelRequest", "LocateRequest", "LocateReply",
         "CloseConnection", "MessageError", "Fragment"]


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def pump(src, dst, conn, direction, log, lock):
    try:
        while True:
            hdr = read_exact(src, 12)
            if hdr is None:
                break
            if hdr[:4] != b"GIOP":
                # Not GIOP: log the rest raw and keep forwarding.
                dst.sendall(hdr)
                with lock:
                    log.write(json.dumps({"conn": conn, "dir": direction,
                                          "raw": hdr.hex()}) + "\n")
                continue
            little = hdr[6] & 1
            (size,) = struct.unpack("<I" if little else ">I", hdr[8:12])
            body = read_exact(src, size)
            if body is None:
                break
            msg = hdr + body
            with lock:
                log.write(json.dumps({"conn": conn, "dir": direction,
                                      "t": round(time.time(), 6),
                                      "hex": msg.hex()}) + "\n")
                log.flush()
            dst.sendall(msg)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def proxy(listen_port, target, logfile, seconds):
    host, port = target.rsplit(":", 1)
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", listen_port))
    lsock.listen(16)
    lsock.settimeout(0.2)
    log = open(logfile, "a")
    lock = threading.Lock()
    end = time.time() + seconds
    conn = 0
    while time.time() < end:
        try:
            c, _ = lsock.accept()
        except socket.timeout:
            continue
        s = socket.create_connection((host, int(port)))
        for x in (c, s):
            x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn += 1
        threading.Thread(target=pump, args=(c, s, conn, "c2s", log, lock),
                         daemon=True).start()
        threading.Thread(target=pump, args=(s, c, conn, "s2c", log, lock),
                         daemon=True).start()


class Cdr:
    def __init__(self, data, little, base=0):
        self.d, self.le, self.p, self.base = data, little, 0, base

    def align(self, n):
        off = (self.p - self.base) % n
        if off:
            self.p += n - off

    def ulong(self):
        self.align(4)
        (v,) = struct.unpack("<I" if self.le else ">I", self.d[self.p:self.p + 4])
        self.p += 4
        return v

    def ushort(self):
        self.align(2)
        (v,) = struct.unpack("<H" if self.le else ">H", self.d[self.p:self.p + 2])
        self.p += 2
        return v

    def octets(self, n):
        v = self.d[self.p:self.p + n]
        self.p += n
        return v

    def string(self):
        n = self.ulong()
        return self.octets(n)[:-1].decode("latin-1")


def decode_msg(m):
    little = m[6] & 1
    out = {"order": "little" if little else "big",
           "giop": "%d.%d" % (m[4], m[5]), "type": TYPES[m[7]] if m[7] < 8 else m[7],
           "size": len(m) - 12}
    # Offsets are from the start of the message: GIOP aligns from there.
    c = Cdr(m, little)
    c.p = 12
    if m[7] == 0 and m[5] == 2:  # GIOP 1.2 Request
        out["request_id"] = c.ulong()
        out["response_flags"] = c.octets(1)[0]
        c.octets(3)
        disp = c.ushort()
        if disp == 0:
            out["object_key"] = c.octets(c.ulong()).hex()
        else:
            out["target_disposition"] = disp
            return out
        out["operation"] = c.string()
        out["service_contexts"] = svc(c)
    elif m[7] == 1 and m[5] == 2:  # GIOP 1.2 Reply
        out["request_id"] = c.ulong()
        out["reply_status"] = c.ulong()
        out["service_contexts"] = svc(c)
    elif m[7] == 0 and m[5] in (0, 1):
        out["service_contexts"] = svc(c)
        out["request_id"] = c.ulong()
    return out


def svc(c):
    res = []
    for _ in range(c.ulong()):
        cid = c.ulong()
        data = c.octets(c.ulong())
        e = {"id": cid, "len": len(data)}
        if cid == 5:  # BI_DIR_IIOP: encapsulated sequence<ListenPoint>
            e2 = Cdr(data, data[0] & 1, 0)
            e2.p = 1
            e["listen_points"] = [(e2.string(), e2.ushort()) for _ in range(e2.ulong())]
        res.append(e)
    return res


def decode(logfile):
    for line in open(logfile):
        r = json.loads(line)
        if "hex" in r:
            print(r["conn"], r["dir"], json.dumps(decode_msg(bytes.fromhex(r["hex"]))))


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "proxy":
        proxy(int(sys.argv[2]), sys.argv[3], sys.argv[4],
              float(sys.argv[5]) if len(sys.argv) > 5 else 120.0)
    elif len(sys.argv) == 3 and sys.argv[1] == "decode":
        decode(sys.argv[2])
    else:
        sys.exit(__doc__)
