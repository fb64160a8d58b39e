#!/usr/bin/env python3
"""Peak memory and CPU time of the tasks server under issue 19's costliest hostile inputs.

Not a test: a measurement. For each case a fresh server is started (the binary given), a
session opened, the server's idle RSS and CPU time read from /proc, the hostile input sent once
over HTTP on 127.0.0.1, then its peak RSS (VmHWM) and CPU time read again. Run it on two builds
(before and after a change) in the same sitting to compare them.

    bench/hostile.py PATH/TO/tasks [PORT]
"""

import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

VERSION = "2025-03-26"


def proc_figures(pid):
    """(VmRSS KiB, VmHWM KiB, CPU seconds) of a process."""
    status = open(f"/proc/{pid}/status").read().split("\n")
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    rss = int(fields["VmRSS"].split()[0])
    hwm = int(fields["VmHWM"].split()[0])
    stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(stat[11]) + int(stat[12])) / ticks
    return rss, hwm, cpu


def post(port, body, session=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session:
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = VERSION
    conn.request("POST", "/mcp", body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    sid = resp.getheader("mcp-session-id")
    conn.close()
    return resp.status, data, sid


def open_session(port, capabilities=None):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": capabilities or {},
        "clientInfo": {"name": "hostile", "version": "0"}}}
    status, data, sid = post(port, json.dumps(init))
    if sid:
        post(port, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), sid)
    return status, data, sid


def d1(port, session):
    return [post(port, "[" + "1," * 999_999 + "1]", session)]


def d2(port, session):
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "tasks",
            "arguments": {"action": "create", "data": {"title": "t", "tags": [1] * 1_390_000}}}}
    return [post(port, json.dumps(call, separators=(",", ":")), session)]


def d5(port, _session):
    capabilities = {f"k{i}": i for i in range(200_000)}
    return [open_session(port, capabilities)]


def d6(port, session):
    answers = []
    for i in range(20_000):
        call = {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {
            "name": "tasks", "_meta": {"progressToken": i},
            "arguments": {"action": "import", "data": {"tasks": [{"title": f"t{i}"}]}}}}
        answers.append(post(port, json.dumps(call), session))
    return answers[-1:]


CASES = [("D1 batch of 1,000,000 ones", d1), ("D2 1,390,000 tags", d2),
         ("D5 initialize of 200k capabilities", d5), ("D6 20,000 progress calls", d6)]


def serve(binary, port):
    data = tempfile.mkdtemp(prefix="wymcp-hostile-")
    server = subprocess.Popen([binary, "--port", str(port), "--data", data],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            if open_session(port)[2]:
                return server, data
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit(f"{binary} did not serve on port {port}")


def main():
    binary, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 18931
    print(f"{'case':38} {'idle RSS':>9} {'peak RSS':>9} {'+MiB':>7} {'CPU s':>6}  answer")
    for name, case in CASES:
        server, data = serve(binary, port)
        try:
            session = open_session(port)[2]
            rss, _, cpu = proc_figures(server.pid)
            answers = case(port, session)
            _, hwm, cpu_after = proc_figures(server.pid)
            status, body, _ = answers[-1]
            print(f"{name:38} {rss // 1024:>7}MB {hwm // 1024:>7}MB {(hwm - rss) / 1024:>7.1f} "
                  f"{cpu_after - cpu:>6.2f}  {status}, {len(body)} bytes")
        finally:
            server.kill()
            server.wait()
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
