#!/usr/bin/env python3
"""frame_flood.py - what frame floods cost a running gateway (docs/security.md,
"Frames"): CONNS raw WebSocket clients from one address send, for SECONDS,
empty continuation frames after an unfinished message (--kind cont), pings
(ping) or pongs (pong), as fast as the socket takes them, each reconnecting
as soon as it is closed. Prints one JSON line: the gateway's CPU (utime +
stime from /proc/PID/stat, in % of one core), connections made, bytes the
flooders wrote.

  python3 tests/bench/frame_flood.py --port P --gateway-pid PID [--kind cont|ping|pong]
                                     [--conns 4] [--seconds 10] [--token KEY] [--tls]
                                     [--handshakes-only]

--tls: over TLS (a gateway with tls_cert; the certificate is not checked).
--handshakes-only: each flooder only connects (and, with --tls, completes
the TLS handshake) and closes, again and again: what a storm of new
connections costs (ip_handshake_rate); "connections" counts those the
gateway let through (TLS: handshakes completed; plain: an answer read to a
GET /healthz), "refused" those closed at accept.

Everything on 127.0.0.1. Not a test: no bound is asserted (the hostile-client
test tests/e2e/hostile_frames.test.js checks the behaviour)."""
import argparse
import base64
import json
import os
import socket
import ssl
import multiprocessing
import time

p = argparse.ArgumentParser()
p.add_argument('--port', type=int, required=True)
p.add_argument('--gateway-pid', type=int, required=True)
p.add_argument('--kind', choices=['cont', 'ping', 'pong'], default='cont')
p.add_argument('--conns', type=int, default=4)
p.add_argument('--seconds', type=float, default=10)
p.add_argument('--token', default='')
p.add_argument('--tls', action='store_true')
p.add_argument('--handshakes-only', action='store_true')
a = p.parse_args()
CTX = ssl.create_default_context()
CTX.check_hostname = False
CTX.verify_mode = ssl.CERT_NONE

# one empty masked frame, 100,000 times per write
ONE = bytes([{'cont': 0x00, 'ping': 0x89, 'pong': 0x8a}[a.kind], 0x80, 1, 2, 3, 4])
BATCH = ONE * 100000
FIRST = bytes([0x01, 0x81, 1, 2, 3, 4, ord('{') ^ 1])  # a text frame without FIN
HZ = os.sysconf('SC_CLK_TCK')
# one process per flooder (threads share a lock: the flood they made was 4x thinner)
conns_made = multiprocessing.Value('q', 0)
bytes_written = multiprocessing.Value('q', 0)
refused = multiprocessing.Value('q', 0)


def cpu_ticks(pid):
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])


def handshake(s):
    auth = f'Authorization: Bearer {a.token}\r\n' if a.token else ''
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f'GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
               f'Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n'
               f'Sec-WebSocket-Protocol: rankcast.v1\r\n{auth}\r\n').encode())
    head = b''
    while b'\r\n\r\n' not in head:
        d = s.recv(4096)
        if not d:
            return False
        head += d
    return head.startswith(b'HTTP/1.1 101')


def connect():
    s = socket.create_connection(('127.0.0.1', a.port), timeout=2)
    return CTX.wrap_socket(s) if a.tls else s


def count(v):
    with v.get_lock():
        v.value += 1


def storm(end):
    while time.time() < end:
        try:
            with connect() as s:
                if not a.tls:
                    s.sendall(b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
                    if not s.recv(64).startswith(b'HTTP/1.1'):
                        raise OSError('no answer')
            count(conns_made)
        except OSError:
            count(refused)


def flooder(end):
    if a.handshakes_only:
        return storm(end)
    while time.time() < end:
        sent = 0
        try:
            with connect() as s:
                s.settimeout(None)  # blocking: sendall without a poll per chunk
                if not handshake(s):
                    time.sleep(0.05)
                    continue
                if a.kind == 'cont':
                    s.sendall(FIRST)
                while time.time() < end:
                    s.sendall(BATCH)
                    sent += len(BATCH)
        except OSError:
            pass
        with conns_made.get_lock():
            conns_made.value += 1
        with bytes_written.get_lock():
            bytes_written.value += sent


t0 = cpu_ticks(a.gateway_pid)
end = time.time() + a.seconds
procs = [multiprocessing.Process(target=flooder, args=(end,)) for _ in range(a.conns)]
for pr in procs:
    pr.start()
for pr in procs:
    pr.join()
t1 = cpu_ticks(a.gateway_pid)
print(json.dumps({'kind': a.kind, 'conns': a.conns, 'seconds': a.seconds,
                  'gateway_cpu_pct': round((t1 - t0) * 100 / HZ / a.seconds),
                  'tls': a.tls, 'handshakes_only': a.handshakes_only, 'refused': refused.value,
                  'connections': conns_made.value, 'mb_written': bytes_written.value >> 20}))
