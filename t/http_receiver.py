#!/usr/bin/env python3
"""t/http_receiver.py: the HTTP endpoint of t/028_worker_http.pl.

    http_receiver.py PORT_FILE LOG_FILE [SECRET_FILE]

Listens on 127.0.0.1 (a free port, written to PORT_FILE), HTTP/1.1 with
keep-alive.  Each POST is logged to LOG_FILE as one JSON line: the job
headers, the body, the client's port (one per connection), and whether its
X-Jobq-Signature checks out against SECRET_FILE's key (HMAC-SHA256 of
"<t>.<body>").  The response follows the payload: {"code": 200, "body":
"...", "retry_after": "...", "sleep": seconds}, default 200 with
{"got": <payload>}.
"""
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, log_file = sys.argv[1], sys.argv[2]
secret = open(sys.argv[3], 'rb').read().rstrip(b'\n') if len(sys.argv) > 3 else None
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        sig_ok = None
        sig = self.headers.get('X-Jobq-Signature')
        if secret is not None and sig:
            parts = dict(p.split('=', 1) for p in sig.split(','))
            want = hmac.new(secret, parts['t'].encode() + b'.' + body, hashlib.sha256).hexdigest()
            sig_ok = hmac.compare_digest(want, parts['v1']) and abs(time.time() - int(parts['t'])) < 300
        payload = json.loads(body)
        with lock, open(log_file, 'a') as f:
            f.write(json.dumps({
                'id': self.headers.get('X-Jobq-Job-Id'), 'queue': self.headers.get('X-Jobq-Queue'),
                'attempt': self.headers.get('X-Jobq-Attempt'), 'type': self.headers.get('Content-Type'),
                'extra': self.headers.get('X-Extra'), 'signed': sig is not None, 'sig_ok': sig_ok,
                'client_port': self.client_address[1], 'payload': payload}) + '\n')
        if payload.get('sleep'):
            time.sleep(payload['sleep'])
        code = payload.get('code', 200)
        out = payload['body'].encode() if 'body' in payload else json.dumps({'got': payload}).encode()
        self.send_response(code)
        if 'retry_after' in payload:
            self.send_header('Retry-After', payload['retry_after'])
        self.send_header('Content-Length', str(len(out)))
        self.end_headers()
        self.wfile.write(out)


class Server(ThreadingHTTPServer):
    request_queue_size = 256        # many connections at once: no SYN dropped


server = Server(('127.0.0.1', 0), Handler)
with open(port_file + '.tmp', 'w') as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + '.tmp', port_file)
server.serve_forever()
