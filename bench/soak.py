#!/usr/bin/env python3
"""Soak: the tasks example on two nodes behind nginx on one redis-server, under a mixed,
bounded load, with each node's memory and open descriptors sampled (issue 48).

Not a test: a measurement. Loopback only; stdlib only; every loop bounded by the deadline and
by an iteration cap. It starts redis-server, two `tasks --redis` nodes (sharing one data
directory, `--trusted-proxies 127.0.0.1`) and nginx round-robin in front (no sticky sessions,
SSE unbuffered, `X-Forwarded-For` set), then runs WORKERS clients through nginx, each looping
over a mix:

* calls: a session (2025-11-25) opened; `tasks` create, update, get, list, complete, delete;
  a project's resource read; the `plan_my_day` prompt; a 2026-07-28 (sessionless) call;
* refusals: values the gate refuses (priority 9), an unknown tool, an unknown session (404),
  a POST of `text/plain` (415), a project that does not exist;
* streams: an `import` with a `progressToken` (answered as SSE), the session's GET stream held
  about a second then dropped and resumed with `Last-Event-ID`, a 2026-07-28
  `subscriptions/listen` held about a second;
* reconnects: every session's connection closed and reopened, the session DELETEd (one in
  ten left to idle out instead, as clients that vanish do).

Every SAMPLE seconds it reads each node's VmRSS and open descriptors (/proc), nginx's, and
Redis's `used_memory` and key count, to OUT/samples.csv; at the end it prints, per node, the
first sample after WARMUP and the last, the highest, and the slope of a least-squares line
over the second half of the run (KiB or descriptors per 10 minutes), and the outcomes counted
by kind. Exit status 1 when a request failed in a way the mix does not expect (a 5xx, a
timeout, a dropped connection), else 0.

    nice -n 15 python3 bench/soak.py PATH/TO/tasks            # 30 minutes (built with --features redis)
    DURATION=1200 WORKERS=3 nice -n 15 python3 bench/soak.py PATH/TO/tasks

Knobs (environment): DURATION (s, 1800), WARMUP (s, 60), SAMPLE (s, 10), WORKERS (3), PAUSE
(s between a worker's requests, 0.02), OUT (a directory kept for the samples and the logs;
default a temporary one, removed unless KEEP=1).
"""

import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

DURATION = float(os.environ.get("DURATION", 1800))
WARMUP = float(os.environ.get("WARMUP", 60))
SAMPLE = float(os.environ.get("SAMPLE", 10))
WORKERS = int(os.environ.get("WORKERS", 3))
PAUSE = float(os.environ.get("PAUSE", 0.02))
ERA = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
# A worker's rounds are bounded by the deadline, and by this cap whatever the clock does.
MAX_ROUNDS = 1_000_000

OUTCOMES = Counter()
UNEXPECTED = []
LOCK = threading.Lock()
STOP = threading.Event()


def note(kind, detail=None):
    with LOCK:
        OUTCOMES[kind] += 1
        if detail is not None and len(UNEXPECTED) < 50:
            UNEXPECTED.append(f"{kind}: {detail}"[:300])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


def sse_messages(raw):
    """The JSON-RPC messages of an SSE body, and the last event id."""
    messages, last_id = [], None
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data:
                try:
                    messages.append(json.loads(data))
                except ValueError:
                    pass
        elif line.startswith("id:"):
            last_id = line[3:].strip()
    return messages, last_id


class Client:
    """One keep-alive connection through nginx; reopened after an error or on demand."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def send(self, method, body=None, headers=None, timeout=30):
        """(status, headers, raw body); a reset connection is reopened once."""
        head = {"Accept": ACCEPT}
        if body is not None:
            head["Content-Type"] = "application/json"
        head.update(headers or {})
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
                self.conn.request(method, "/mcp", body=data, headers=head)
                resp = self.conn.getresponse()
                raw = resp.read()
                if resp.getheader("connection", "").lower() == "close":
                    self.close()
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, raw
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest, http.client.ResponseNotReady):
                self.close()
                if attempt:
                    raise
        raise RuntimeError("unreachable")

    def rpc(self, message, sid=None, headers=None):
        """(status, the answer's JSON-RPC message or None, all messages)."""
        head = dict(headers or {})
        if sid:
            head["Mcp-Session-Id"] = sid
            head["MCP-Protocol-Version"] = ERA
        status, hdrs, raw = self.send("POST", message, head)
        if "text/event-stream" in hdrs.get("content-type", ""):
            messages, _ = sse_messages(raw)
        else:
            try:
                messages = [json.loads(raw)] if raw.strip() else []
            except ValueError:
                messages = []
        answer = next((m for m in messages if "id" in m and "method" not in m), None)
        return status, answer, messages, hdrs


def request(rid, method, params=None):
    message = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def modern(rid, method, params):
    """A 2026-07-28 request: the era's `_meta` and headers."""
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "0"},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    return request(rid, method, params), headers


def expect(kind, ok, detail):
    """Counts `kind` when `ok`, else an unexpected outcome with `detail`."""
    if ok:
        note(kind)
    else:
        note("unexpected " + kind, detail)
    return ok


def open_session(client, name):
    status, answer, _, hdrs = client.rpc(request(0, "initialize", {
        "protocolVersion": ERA, "capabilities": {},
        "clientInfo": {"name": name, "version": "0"}}))
    sid = hdrs.get("mcp-session-id")
    if not expect("initialize", status == 200 and sid and answer and "result" in answer,
                  f"{status} {answer}"):
        return None
    client.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"Mcp-Session-Id": sid, "MCP-Protocol-Version": ERA})
    return sid


def call(client, sid, rid, action, data):
    args = {"action": action, "data": data}
    return client.rpc(request(rid, "tools/call", {"name": "tasks", "arguments": args}), sid)


def stream_get(port, sid, last_event_id=None, hold=1.0):
    """The session's GET stream held `hold` seconds (a connection of its own), then dropped:
    its status and the last event id seen."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=hold)
    head = {"Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": ERA}
    if last_event_id:
        head["Last-Event-ID"] = last_event_id
    seen = None
    try:
        conn.request("GET", "/mcp", headers=head)
        resp = conn.getresponse()
        status = resp.status
        if status == 200:
            try:
                chunk = resp.read1(65536)
                _, seen = sse_messages(chunk)
            except (socket.timeout, TimeoutError):
                pass
    finally:
        conn.close()
    return status, seen


def listen_modern(port, hold=1.0):
    """A 2026-07-28 `subscriptions/listen` held `hold` seconds, then dropped: its status."""
    message, headers = modern(1, "subscriptions/listen",
                              {"notifications": {"resources": {"subscribe": True}}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=hold)
    headers.update({"Accept": ACCEPT, "Content-Type": "application/json"})
    try:
        conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
        resp = conn.getresponse()
        status = resp.status
        try:
            resp.read1(65536)
        except (socket.timeout, TimeoutError):
            pass
    finally:
        conn.close()
    return status


def round_of(worker, n, port, client):
    """One round of the mix for `worker`; every outcome counted."""
    sid = open_session(client, f"soak-{worker}")
    if sid is None:
        return
    rid = 1
    title = f"soak {worker}-{n}"
    status, answer, _, _ = call(client, sid, rid, "create", {"title": title, "tags": ["soak"]})
    created = None
    if answer and "result" in answer and not answer["result"].get("isError"):
        created = answer["result"].get("structuredContent", {}).get("id")
        if created is None:
            try:
                created = json.loads(answer["result"]["content"][0]["text"]).get("id")
            except (KeyError, IndexError, ValueError, AttributeError):
                created = None
    if not expect("call create", status == 200 and created is not None, f"{status} {answer}"):
        return
    for action, data in (("update", {"id": created, "priority": 1, "notes": "soaked"}),
                         ("get", {"id": created}),
                         ("list", {"limit": 5}),
                         ("complete", {"id": created}),
                         ("delete", {"id": created})):
        rid += 1
        status, answer, _, _ = call(client, sid, rid, action, data)
        expect(f"call {action}", status == 200 and answer and "result" in answer
               and not answer["result"].get("isError"), f"{status} {answer}")
        time.sleep(PAUSE)
    rid += 1
    status, answer, _, _ = client.rpc(request(rid, "prompts/get", {"name": "plan_my_day"}), sid)
    expect("call prompt", status == 200 and answer and "result" in answer, f"{status} {answer}")
    rid += 1
    status, answer, _, _ = client.rpc(
        request(rid, "resources/read", {"uri": "tasks://projects/no-such-project"}), sid)
    expect("refusal unknown resource", status == 200 and answer and "error" in answer,
           f"{status} {answer}")

    # Refusals.
    rid += 1
    status, answer, _, _ = call(client, sid, rid, "create", {"title": "x", "priority": 9})
    expect("refusal invalid value", status == 200 and answer is not None
           and ("error" in answer or answer.get("result", {}).get("isError")), f"{status} {answer}")
    rid += 1
    status, answer, _, _ = client.rpc(request(rid, "tools/call", {"name": "no_such_tool"}), sid)
    expect("refusal unknown tool", status == 200 and answer is not None
           and ("error" in answer or answer.get("result", {}).get("isError")), f"{status} {answer}")
    rid += 1
    status, _, _, _ = client.rpc(request(rid, "tools/list"), "0" * 32)
    expect("refusal unknown session", status == 404, f"{status}")
    status, _, raw = client.send("POST", request(rid, "ping"),
                                 {"Accept": "application/json", "Mcp-Session-Id": sid,
                                  "MCP-Protocol-Version": ERA, "Content-Type": "text/plain"})
    expect("refusal content type", status == 415, f"{status} {raw[:200]!r}")

    # Streams: a call answered as SSE (progress), the GET stream dropped and resumed.
    rid += 1
    items = [{"title": f"soak import {worker}-{n}-{i}"} for i in range(3)]
    status, answer, messages, _ = client.rpc(request(rid, "tools/call", {
        "name": "tasks", "arguments": {"action": "import", "data": {"tasks": items}},
        "_meta": {"progressToken": f"p{worker}-{n}"}}), sid)
    imported = answer is not None and "result" in answer and not answer["result"].get("isError")
    expect("stream import", status == 200 and imported, f"{status} {answer}")
    if imported:
        rid += 1
        status, answer, _, _ = call(client, sid, rid, "list", {"tags": ["soak"], "limit": 50})
        ids = []
        if answer and "result" in answer:
            structured = answer["result"].get("structuredContent") or {}
            ids = [t.get("id") for t in structured.get("tasks", []) if isinstance(t, dict)]
        for task_id in ids[:10]:
            rid += 1
            call(client, sid, rid, "delete", {"id": task_id})
    if n % 3 == 0:
        status, seen = stream_get(port, sid)
        expect("stream get", status == 200, f"{status}")
        status, _ = stream_get(port, sid, last_event_id=seen or "0", hold=0.5)
        expect("stream resumed", status in (200, 409), f"{status}")
    if n % 3 == 1:
        expect("stream listen 2026", listen_modern(port) == 200, "listen")
        message, headers = modern(rid, "tools/call", {
            "name": "tasks", "arguments": {"action": "list", "data": {"limit": 3}}})
        status, answer, _, _ = client.rpc(message, headers=headers)
        expect("call 2026", status == 200 and answer and "result" in answer, f"{status} {answer}")

    # Reconnect: the session ended (one in ten left to idle out), the connection reopened.
    if n % 10 != 0:
        status, _, _ = client.send("DELETE", None, {"Mcp-Session-Id": sid,
                                                    "MCP-Protocol-Version": ERA})
        expect("delete session", status in (200, 204), f"{status}")
    else:
        note("session left to idle")
    client.close()


def worker(index, port, deadline):
    client = Client(port)
    for n in range(MAX_ROUNDS):
        if STOP.is_set() or time.time() >= deadline:
            break
        try:
            round_of(index, n, port, client)
        except (OSError, http.client.HTTPException) as error:
            note("unexpected transport", f"{type(error).__name__}: {error}")
            client.close()
            time.sleep(0.5)
        time.sleep(PAUSE)


def proc_figures(pid):
    """(VmRSS KiB, open descriptors) of a process, or (None, None) once it is gone."""
    try:
        status = open(f"/proc/{pid}/status").read().splitlines()
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        return rss, len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration):
        return None, None


def redis_figures(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "info"], capture_output=True,
                         text=True, timeout=10).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    keys = 0
    for value in (fields.get(f"db{db}", "") for db in range(16)):
        if value.startswith("keys="):
            keys += int(value.split(",")[0][5:])
    return int(fields.get("used_memory", "0").strip()) // 1024, keys


def slope_per_10min(points):
    """The least-squares slope of (seconds, value) points, per 600 s."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    var = sum((p[0] - mx) ** 2 for p in points)
    if var == 0:
        return 0.0
    return 600 * sum((p[0] - mx) * (p[1] - my) for p in points) / var


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    for tool in ("redis-server", "redis-cli", "nginx"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is required (Debian: redis-server, nginx)")
    keep = os.environ.get("KEEP") == "1" or "OUT" in os.environ
    out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="wymcp-soak-")
    os.makedirs(out, exist_ok=True)
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    procs = []

    def spawn(args, log):
        p = subprocess.Popen(args, stdout=open(os.path.join(out, log), "ab"),
                             stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(p)
        return p

    redis_port, lb_port = free_port(), free_port()
    node_ports = (free_port(), free_port())
    try:
        spawn(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "",
               "--appendonly", "no", "--dir", out], "redis.log")
        wait_port(redis_port)
        nodes = []
        for port in node_ports:
            nodes.append(spawn([binary, "--port", str(port), "--data", data,
                                "--redis", f"redis://127.0.0.1:{redis_port}/",
                                "--trusted-proxies", "127.0.0.1"], f"node-{port}.log"))
        for port in node_ports:
            wait_port(port)
        upstream = "\n".join(f"    server 127.0.0.1:{p} max_fails=0;" for p in node_ports)
        conf = os.path.join(out, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 1;
daemon off;
error_log {out}/nginx-error.log warn;
pid {out}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {out}/body; proxy_temp_path {out}/proxy;
  fastcgi_temp_path {out}/fastcgi; uwsgi_temp_path {out}/uwsgi; scgi_temp_path {out}/scgi;
  upstream nodes {{
{upstream}
  }}
  server {{
    listen 127.0.0.1:{lb_port};
    location / {{
      proxy_pass http://nodes;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 120s;
      proxy_next_upstream off;
    }}
  }}
}}
""")
        nginx = spawn(["nginx", "-c", conf, "-p", out], "nginx.log")
        wait_port(lb_port)

        start = time.time()
        deadline = start + DURATION
        threads = [threading.Thread(target=worker, args=(i, lb_port, deadline), daemon=True)
                   for i in range(WORKERS)]
        for t in threads:
            t.start()
        names = [f"node{i + 1}" for i in range(len(nodes))]
        samples = []
        with open(os.path.join(out, "samples.csv"), "w") as csv:
            csv.write("seconds," + ",".join(f"{n}_rss_kib,{n}_fds" for n in names)
                      + ",nginx_rss_kib,nginx_fds,redis_used_kib,redis_keys\n")
            for _ in range(int(DURATION / SAMPLE) + 2):
                now = time.time() - start
                row = [round(now)]
                for node in nodes:
                    row.extend(proc_figures(node.pid))
                row.extend(proc_figures(nginx.pid))
                row.extend(redis_figures(redis_port))
                samples.append(row)
                csv.write(",".join("" if v is None else str(v) for v in row) + "\n")
                csv.flush()
                if any(node.poll() is not None for node in nodes):
                    note("unexpected node exit", [node.poll() for node in nodes])
                    STOP.set()
                    break
                if time.time() >= deadline:
                    break
                time.sleep(max(0.0, min(SAMPLE, deadline - time.time())))
        STOP.set()
        for t in threads:
            t.join(timeout=60)

        print(f"soak: {DURATION:.0f} s, {WORKERS} workers, {len(samples)} samples "
              f"({out}/samples.csv)")
        after = [s for s in samples if s[0] >= WARMUP] or samples
        half = [s for s in samples if s[0] >= samples[-1][0] / 2]
        columns = [(f"{n} RSS KiB", 1 + 2 * i) for i, n in enumerate(names)]
        columns += [(f"{n} fds", 2 + 2 * i) for i, n in enumerate(names)]
        base = 1 + 2 * len(names)
        columns += [("nginx RSS KiB", base), ("nginx fds", base + 1),
                    ("redis used KiB", base + 2), ("redis keys", base + 3)]
        print(f"{'figure':<16} {'at ' + str(after[0][0]) + ' s':>12} {'at end':>12} "
              f"{'highest':>12} {'slope/10min (2nd half)':>24}")
        for label, col in columns:
            values = [s[col] for s in samples if s[col] is not None]
            if not values:
                continue
            points = [(s[0], s[col]) for s in half if s[col] is not None]
            print(f"{label:<16} {after[0][col]:>12} {samples[-1][col]:>12} {max(values):>12} "
                  f"{slope_per_10min(points):>24.1f}")
        print("outcomes:")
        for kind, count in sorted(OUTCOMES.items()):
            print(f"  {kind:<32} {count}")
        for line in UNEXPECTED:
            print("  " + line)
        return 1 if any(k.startswith("unexpected") for k in OUTCOMES) else 0
    finally:
        STOP.set()
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        if not keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
