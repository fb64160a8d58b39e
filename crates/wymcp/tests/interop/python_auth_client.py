"""Interop check: the official Python MCP SDK client (mcp 2.3.0) calls the tasks example behind
JWT auth with a bearer token, in both eras.

Usage: python_auth_client.py PATH/TO/tasks

The script plays the identity provider: it makes an RSA key, serves its JWKS on 127.0.0.1, and
signs access tokens (PyJWT, which the SDK installs). It starts the example with
`--jwks-url … --issuer … --audience …` and asserts:

* without a token, the endpoint answers 401 with the `WWW-Authenticate` challenge naming the
  protected-resource metadata, and the SDK client fails to connect;
* with a `tasks:read tasks:write` token (the SDK's way of setting a header: an httpx client
  passed to `streamable_http_client`), the client lists the tools, creates a task and reads
  it, in the default mode (2026-07-28) and in the session era;
* with a `tasks:read` token the read works and `create` is refused: the SDK raises (it keeps
  no body of a 403), and the same request on the wire is 403 with the step-up challenge
  (`error="insufficient_scope", scope="tasks:write"`).

Exits non-zero on any mismatch.
"""

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

ISSUER = "https://id.example.test/realms/main"
AUDIENCE = "https://tasks.example.test/mcp"
KID = "interop-key"


def b64url(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def serve_jwks(public) -> str:
    numbers = public.public_numbers()
    body = json.dumps({"keys": [{"kty": "RSA", "kid": KID, "alg": "RS256", "use": "sig",
                                 "n": b64url(numbers.n), "e": b64url(numbers.e)}]}).encode()

    class Jwks(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Jwks)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/jwks"


def token(key, scope: str) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "interop", "scope": scope,
              "iat": now, "exp": now + 600}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID})


def start_example(binary: str, jwks_url: str, data: str) -> tuple[subprocess.Popen, str]:
    args = [binary, "--port", "0", "--jwks-url", jwks_url, "--issuer", ISSUER, "--audience", AUDIENCE]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "WYMCP_TASKS_DATA": data})
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        if found:
            return proc, found.group(0)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError("the tasks example did not say where it listens")


def client(url: str, bearer: str, mode: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"})
    return Client(streamable_http_client(url, http_client=http), mode=mode)


async def writes_and_reads(url: str, bearer: str, mode: str, title: str) -> None:
    async with client(url, bearer, mode) as c:
        assert c.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28"), c.protocol_version
        names = [t.name for t in (await c.list_tools()).tools]
        assert "tasks" in names, names
        created = await c.call_tool("tasks", {"action": "create", "data": {"title": title}})
        assert not created.is_error, created
        task_id = json.loads(created.content[0].text)["id"]
        got = await c.call_tool("tasks", {"action": "get", "data": {"id": task_id}})
        assert not got.is_error and title in got.content[0].text, got


async def reader_is_refused_create(url: str, bearer: str) -> None:
    async with client(url, bearer, "auto") as c:
        listed = await c.call_tool("tasks", {"action": "list", "data": {}})
        assert not listed.is_error, listed
        try:
            await c.call_tool("tasks", {"action": "create", "data": {"title": "no"}})
        except MCPError:
            pass  # the SDK turns the 403 into an error of its own (the body is not kept)
        else:
            raise AssertionError("create with tasks:read was not refused")
    # What the SDK saw, on the wire: the step-up challenge naming the scope needed.
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "tasks", "arguments": {"action": "create", "data": {"title": "no"}},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}
    headers = {"authorization": f"Bearer {bearer}", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "tasks"}
    async with httpx2.AsyncClient() as raw:
        answer = await raw.post(url, json=body, headers=headers)
    assert answer.status_code == 403, (answer.status_code, answer.text)
    challenge = answer.headers.get("www-authenticate", "")
    assert 'error="insufficient_scope"' in challenge and 'scope="tasks:write"' in challenge, challenge


async def main(binary: str) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    jwks_url = serve_jwks(key.public_key())
    with tempfile.TemporaryDirectory() as data:
        proc, url = start_example(binary, jwks_url, data)
        try:
            async with httpx2.AsyncClient() as raw:
                answer = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                        headers={"accept": "application/json, text/event-stream"})
            assert answer.status_code == 401, answer.status_code
            challenge = answer.headers.get("www-authenticate", "")
            assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge, challenge
            try:
                async with Client(url) as anonymous:
                    await anonymous.list_tools()
            except Exception:
                pass
            else:
                raise AssertionError("the SDK client connected without a token")
            writer = token(pem, "tasks:read tasks:write")
            await writes_and_reads(url, writer, "auto", "Written at 2026-07-28")
            await writes_and_reads(url, writer, "legacy", "Written in a session")
            await reader_is_refused_create(url, token(pem, "tasks:read"))
        finally:
            proc.kill()
            proc.wait()
    print("python auth client: 401 challenge without a token; bearer token accepted in both eras; tasks:read refused create")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
