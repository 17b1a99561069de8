"""A real PostgreSQL server for the tests, made from the machine's own binaries.

``postgres_server`` (session-scoped; one server per xdist worker) runs ``initdb`` and
``pg_ctl`` from PATH or ``/usr/lib/postgresql/*/bin`` (where Debian's ``postgresql``
package puts them, off PATH) into a temporary folder, and stops the server and removes the
folder at the end. It listens on a unix socket in that folder (no password: ``trust``) and on
127.0.0.1 at a free port, where a role with a password is required (``scram-sha-256``), so
tests can try refused credentials too. ``postgres_url`` is a fresh, empty database for one
test, reached over the socket; ``langgraph_postgres`` one with every LangGraph fixture thread
written into it once per session, and LangGraph's own truths of them.

No binaries: the tests that need the server are skipped, saying how to install them; under
CI (``CI`` set, as ``.ci/run`` runs) they fail instead, so a missing server can never pass
unseen. ``initdb`` and ``postgres`` refuse to run as root: as root the server runs as an
unprivileged user (``postgres``, which Debian's package creates, else ``nobody``) through
``runuser``, its folder handed to that user.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

#: The superuser initdb makes (no password: reached over the socket only).
SUPERUSER = "replay"
#: A role that must give its password (reached over TCP), for tests of credentials.
PASSWORD_USER = "replay_pw"
PASSWORD = "s3cret-pw"
#: The server's settings: a throwaway server needs no durability.
SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=40")


def find_binaries() -> Path | None:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres``: PATH first, then the newest
    of Debian's ``/usr/lib/postgresql/<major>/bin``."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).resolve().parent
    found = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").exists()]
    found.sort(key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    return found[-1] if found else None


def _server_user() -> str | None:
    """Who runs the server: None (this process's user) unless that is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError(
        "running as root and no unprivileged user (postgres, nobody) to run PostgreSQL"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    """A running throwaway server: its folder, socket folder and TCP port."""

    bin_dir: Path
    root: Path
    port: int
    user: str | None
    _databases: int = field(default=0, init=False)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin_dir / args[0]), *args[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        # a locale the server may lack must not stop it: the data folder is made with none
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PG"))}
        env["LANG"] = "C"
        # run in the server's folder: the user runuser switches to may not reach the cwd
        return subprocess.run(
            cmd, check=True, capture_output=True, text=True, env=env, timeout=120, cwd=self.root
        )

    def start(self) -> None:
        self.socket_dir.mkdir()
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            for path in (self.root, self.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "--no-locale", "-E", "UTF8",
            "--auth-local=trust", "--auth-host=scram-sha-256",
        )  # fmt: skip
        options = " ".join(
            [f"-k {self.socket_dir}", "-c listen_addresses=127.0.0.1", f"-p {self.port}"]
            + [f"-c {s}" for s in SETTINGS]
        )
        self._run(
            "pg_ctl", "start", "-w", "-t", "120", "-D", str(self.data),
            "-l", str(self.root / "server.log"), "-o", options,
        )  # fmt: skip
        self.execute(f"CREATE ROLE {PASSWORD_USER} LOGIN PASSWORD '{PASSWORD}'")
        # it may read every table (PostgreSQL 14 and later), as a reader's account would
        self.execute(f"GRANT pg_read_all_data TO {PASSWORD_USER}")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w")

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URL reaching ``dbname`` over the unix socket as the superuser."""
        return f"postgresql://{SUPERUSER}@/{dbname}?host={quote(str(self.socket_dir), safe='')}&port={self.port}"

    def tcp_url(self, dbname: str = "postgres", password: str | None = PASSWORD) -> str:
        """A URL reaching ``dbname`` over TCP as the role that needs a password (``None``:
        no password in the URL)."""
        auth = PASSWORD_USER if password is None else f"{PASSWORD_USER}:{quote(password, safe='')}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def execute(self, sql: str, dbname: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            conn.execute(sql)

    def create_database(self, prefix: str = "test") -> str:
        """A new empty database, owned by the superuser; its socket URL."""
        self._databases += 1
        name = f"{prefix}_{self._databases}"
        self.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: .ci/run installs Debian's postgresql)", pytrace=False)
    pytest.skip(f"{reason}: install PostgreSQL (Debian: apt-get install postgresql) to run this")


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """Start a server (or skip / fail, see the module's docstring); stop it at the end."""
    bin_dir = find_binaries()
    if bin_dir is None:
        _unavailable(
            "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin"
        )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[test]')")
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="replay-pg-"))
    server = PostgresServer(bin_dir, root, _free_port(), _server_user())
    try:
        try:
            server.start()
        except subprocess.CalledProcessError as exc:
            log = server.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"PostgreSQL did not start: {' '.join(map(str, exc.cmd))}\n{exc.stderr}\n{tail}"
            ) from exc
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session (per xdist worker)."""
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh empty database on the session's server, as a socket URL."""
    return postgres_server.create_database()


@dataclass(frozen=True)
class LangGraphDatabase:
    """A database holding every fixture thread, written by PostgresSaver, and what
    LangGraph's get_state says of each (make_langgraph.run_into_postgres)."""

    url: str
    #: per fixture database name (agent, flow, ...), per thread: as NAME.truth.json's threads
    truths: dict[str, Any]


@pytest.fixture(scope="session")
def langgraph_postgres(postgres_server: PostgresServer) -> LangGraphDatabase:
    """The fixture graphs run once per session into a database of their own: read it, never
    write it (a test that writes takes ``postgres_url`` and runs the graphs itself)."""
    from tests.fixtures.langgraph import make_langgraph

    url = postgres_server.create_database("langgraph")
    return LangGraphDatabase(url, make_langgraph.run_into_postgres(url))
