"""Running the app: `run(cfg)` for `augmenter serve`, `Background(app)` for tests and benchmarks."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from augmenter.errors import InputError


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (port 0: a free one), or InputError naming the address."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by each connection: no 40 ms Nagle stalls
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


def _server(app, sock: socket.socket):
    import uvicorn

    config = uvicorn.Config(app, log_config=None, access_log=False, timeout_graceful_shutdown=5, lifespan="off")
    return uvicorn.Server(config)


def _announce(line: str) -> None:
    print(line, flush=True)  # at once, also when stdout is a pipe or a log file


def run(cfg, announce: Callable[[str], None] = _announce) -> int:
    """`augmenter serve`: bind, build the agents (errors come before anything listens), serve until Ctrl-C."""
    from omegaconf import OmegaConf

    from augmenter.serve.app import create_app
    from augmenter.serve.pool import pool_from_config, warm_up
    from augmenter.serve.settings import ServeSettings

    settings = ServeSettings.from_config(OmegaConf.to_container(cfg.serve, resolve=True))
    sock = bind(settings.host, settings.port)
    try:
        pool = pool_from_config(cfg, settings.workers, settings.max_queue).build()
        warm_up(cfg)
        server = _server(create_app(pool, settings), sock)
        base = _url(sock)
        auth = f"bearer token from ${settings.api_key_env}" if settings.api_key else "no auth"
        sock.listen(2048)  # from the announcement on, a client's connection waits in the backlog, never refused
        announce(
            f"augmenter: web chat at {base}/, OpenAI-compatible API at {base}/v1 ({settings.workers} "
            f"worker{'s' * (settings.workers > 1)}, {auth}); Ctrl-C stops it"
        )
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0


class Background:
    """The app served by uvicorn in a thread on 127.0.0.1 (a free port): `with Background(app) as url: ...`."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0):
        self.app, self.sock = app, bind(host, port)
        self.url = _url(self.sock)
        self.server = _server(app, self.sock)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server at {self.url} did not start")
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
