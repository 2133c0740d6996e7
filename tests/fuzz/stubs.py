"""What the fuzz stack talks to besides itself, on loopback, answering at once: without them
the service waits for timeouts and answers 503 (`mx_lookup_failed`, `dns_provider_unavailable`:
right for a backing service that is down, but they hide everything behind them).

- DNS (UDP and TCP on one port), the stack's `--dns`: every name exists, with one MX host
  (`mx.fuzz.invalid.`) and no other record. MX queries get that answer, every other type
  NOERROR with no data (and an SOA for negative caching).
- AWS (HTTP), the stack's `MAILWARD_AWS_ENDPOINT` for the DNS connections (Route 53, STS):
  every request is refused as AWS refuses unknown credentials (403 `InvalidClientTokenId`), so
  `POST /dns-connections` answers its documented 422 `dns_connection_failed`.

Prints "DNS_PORT AWS_PORT" once every socket is bound, then serves until killed.

Usage: python stubs.py
"""

import http.server
import socket
import socketserver
import struct
import sys
import threading

MX_HOST = b"\x02mx\x04fuzz\x07invalid\x00"
SOA = (
    b"\x02ns\x04fuzz\x07invalid\x00"
    + b"\x0ahostmaster\x04fuzz\x07invalid\x00"
    + struct.pack(">IIIII", 1, 3600, 600, 86400, 60)
)
TYPE_MX, TYPE_SOA, CLASS_IN = 15, 6, 1


def answer(query):
    """The response to one query message, or None when it is not a query we can read."""
    if len(query) < 12:
        return None
    ident, flags, qdcount = struct.unpack(">HHH", query[:6])
    if flags & 0x8000 or qdcount != 1:
        return None
    at = 12
    while at < len(query) and query[at] != 0:
        if query[at] & 0xC0:
            return None
        at += 1 + query[at]
    end = at + 5
    if end > len(query):
        return None
    question = query[12:end]
    qtype, qclass = struct.unpack(">HH", query[at + 1 : end])
    opcode = flags & 0x7800
    if opcode != 0:
        header = struct.pack(">HHHHHH", ident, 0x8000 | opcode | 4, 1, 0, 0, 0)  # NOTIMP
        return header + question
    # QR, AA, RD as asked; NOERROR.
    out_flags = 0x8400 | (flags & 0x0100)
    name = b"\xc0\x0c"  # the question's name
    if qtype == TYPE_MX and qclass == CLASS_IN:
        rdata = struct.pack(">H", 10) + MX_HOST
        record = name + struct.pack(">HHIH", TYPE_MX, CLASS_IN, 300, len(rdata)) + rdata
        return struct.pack(">HHHHHH", ident, out_flags, 1, 1, 0, 0) + question + record
    record = name + struct.pack(">HHIH", TYPE_SOA, CLASS_IN, 60, len(SOA)) + SOA
    return struct.pack(">HHHHHH", ident, out_flags, 1, 0, 1, 0) + question + record


class Udp(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        reply = answer(data)
        if reply is not None:
            sock.sendto(reply, self.client_address)


class Tcp(socketserver.BaseRequestHandler):
    def handle(self):
        conn = self.request
        conn.settimeout(10)
        try:
            while True:
                size = conn.recv(2, socket.MSG_WAITALL)
                if len(size) < 2:
                    return
                (length,) = struct.unpack(">H", size)
                reply = answer(conn.recv(length, socket.MSG_WAITALL))
                if reply is None:
                    return
                conn.sendall(struct.pack(">H", len(reply)) + reply)
        except OSError:
            return


class UdpServer(socketserver.ThreadingUDPServer):
    daemon_threads = True


class TcpServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def bind():
    """UDP on a free port, then TCP on the same one (tried again when TCP's is taken)."""
    for _ in range(20):
        udp = UdpServer(("127.0.0.1", 0), Udp)
        port = udp.server_address[1]
        try:
            return udp, TcpServer(("127.0.0.1", port), Tcp)
        except OSError:
            udp.server_close()
    sys.exit("stubs.py: no free port for both UDP and TCP")


REFUSED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code>"
    b"<Message>The security token included in the request is invalid.</Message></Error>"
    b"<RequestId>fuzz</RequestId></ErrorResponse>"
)


class Aws(http.server.BaseHTTPRequestHandler):
    def refuse(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(403)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(REFUSED)))
        self.send_header("x-amzn-RequestId", "fuzz")
        self.end_headers()
        self.wfile.write(REFUSED)

    do_GET = do_POST = do_PUT = do_DELETE = refuse

    def log_message(self, *args):
        pass


udp, tcp = bind()
aws = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Aws)
aws.daemon_threads = True
for server in (tcp, aws):
    threading.Thread(target=server.serve_forever, daemon=True).start()
print(udp.server_address[1], aws.server_address[1], flush=True)
udp.serve_forever()
