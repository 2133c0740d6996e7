"""Start moto's server with DynamoDB writes made atomic, as they are on AWS.

moto serves requests on many threads and does not lock an item while it
applies an UpdateItem, so two concurrent `ADD n :one` updates can both read
17 and both answer 18. Real DynamoDB applies every write to one item
atomically; the store's counters and conditional writes rely on that. This
wrapper runs the stock moto application behind a WSGI middleware that
serialises DynamoDB requests (and only those: SQS long polls keep their own
threads), so the conformance suite tests our code rather than moto's races.

It also keeps every SES v2 SendEmail request as sent (moto stores only the
subject and one body of a simple message, not its text part or headers) and
serves them, in order, at GET /_mailward/ses-sent: the black-box tests' AWS
pass reads the mail it sent through SES there.

Usage: python tests/moto-serve.py -H 127.0.0.1 -p PORT  (same flags as moto_server)
"""

import argparse
import io
import json
import os
import threading

# ACM "validates" a DNS-validated certificate this many seconds after the request (moto's
# default is 60): the policy-front test waits for it. Read when moto is imported.
os.environ.setdefault("MOTO_ACM_VALIDATION_WAIT", "1")

from werkzeug.serving import run_simple

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)


class SerialDynamoDB:
    """WSGI middleware: one DynamoDB request at a time, everything else concurrent."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if not target.startswith("DynamoDB_"):
            return self.app(environ, start_response)
        with self.lock:
            # Materialise the body inside the lock: the write happens while
            # moto builds the response, not when werkzeug sends it.
            return list(self.app(environ, start_response))


class SesCapture:
    """WSGI middleware: keeps each SES v2 SendEmail request body that moto accepted."""

    PATH = "/v2/email/outbound-emails"

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.sent = []

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/_mailward/ses-sent":
            with self.lock:
                body = json.dumps(self.sent).encode()
            start_response(
                "200 OK",
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
            )
            return [body]
        if path != self.PATH or environ.get("REQUEST_METHOD") != "POST":
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length)
        environ["wsgi.input"] = io.BytesIO(raw)
        statuses = []

        def record_status(status, headers, exc_info=None):
            statuses.append(status)
            return start_response(status, headers, exc_info)

        response = list(self.app(environ, record_status))
        if statuses and statuses[0].startswith("200"):
            with self.lock:
                self.sent.append(json.loads(raw))
        return response


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5000)
    args = parser.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))  # as moto_server does
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(
        args.host,
        args.port,
        SesCapture(SerialDynamoDB(app)),
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main()
