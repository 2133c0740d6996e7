"""A loopback relay that adds `Authorization: Bearer TOKEN` to every request and forwards it,
headers untouched (Host and Origin included), to TARGET: the MCP conformance suite has no
option for credentials, so this lets it test `/mcp` with a real access token.

Usage: bearer_proxy.py PORT TARGET_URL TOKEN
"""

import http.client
import http.server
import sys
import urllib.parse

port, target, token = int(sys.argv[1]), urllib.parse.urlparse(sys.argv[2]), sys.argv[3]


class Relay(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
        headers["Authorization"] = f"Bearer {token}"
        upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
        # skip_host: the client's own Host goes through unchanged (the rebinding checks).
        upstream.putrequest(self.command, target.path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            upstream.putheader(name, value)
        upstream.endheaders(body)
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the suite hung up first: nothing to deliver to
        upstream.close()

    do_GET = do_POST = do_DELETE = relay

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Relay).serve_forever()
