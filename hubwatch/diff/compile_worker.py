"""Chat templates compiled in a child process: off the tracker's interpreter, and stopped at the deadline.

jinja2 compiles a template (parse, the sandbox's meters, code generation, Python's `compile`) in
pure Python: tens of milliseconds for a real chat template, seconds for a hostile one near the
size limit, and a thread cannot be stopped while it does. Done in the process that polls, every
other poll thread waits for the GIL meanwhile, and a compile past the render deadline keeps
burning CPU after its render was reported as timed out.

`CompileWorker` sends the template text to one long-lived child (this interpreter running
`serve_forever`), which compiles it exactly as the sandbox does and answers with the
code object (`marshal`, produced by our own child from the text) or with the render result of the
failure (the same `RenderResult` the sandbox would report). A compile that passes the render's
deadline kills the child (the next compile starts a new one) and is reported as a timeout. When no
child can be started, templates are compiled in the calling process as before.

Wire format, both ways: a 4-byte big-endian length, then the payload. The request is the template's
UTF-8 (surrogates passed through). The answer starts with one status byte: `C` and the marshalled
code, or `F` and the failure's JSON (`{"error": ..., "error_kind": ...}`).
"""

from __future__ import annotations

import atexit
import json
import logging
import marshal
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import IO

__all__ = ["COMPILER", "CompileFailed", "CompileWorker", "serve_forever"]

log = logging.getLogger(__name__)

_LENGTH = 4
_MAX_ANSWER = 256 * 1024 * 1024  # a marshalled code object of a 500k-character template is a few MB
_CHILD = "from hubwatch.diff.compile_worker import serve_forever; serve_forever()"
_START_TIMEOUT_S = 30.0  # for the child's interpreter and imports, on a loaded machine


class CompileFailed(Exception):
    """The template did not compile (or not in time): `error` and `error_kind` as a `RenderResult` has them."""

    def __init__(self, error: str, error_kind: str) -> None:
        super().__init__(error)
        self.error = error
        self.error_kind = error_kind


class _Gone(Exception):
    """The child exited or its pipe broke."""


class CompileWorker:
    """One child process compiling templates, one at a time (a lock; waiting counts against the deadline).

    `command`: how to start the child (default: this interpreter running `serve_forever`).
    """

    def __init__(self, command: list[str] | None = None) -> None:
        self.command = command if command is not None else [sys.executable, "-c", _CHILD]
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._unavailable = False  # a child could not be started: compile in this process from now on
        self.started = 0  # children started (a killed or crashed one is replaced on the next compile)

    def compile(self, source: str, deadline: float, here: Callable[[str], CodeType]) -> CodeType:
        """The code of `source`, compiled by the child before `deadline` (a `time.monotonic()` value).

        `here` compiles in this process, when no child can be started. Raises CompileFailed with the
        sandbox's result for a template that does not compile, or a timeout at the deadline. Starting
        the child does not count against the deadline.
        """
        if self._unavailable:
            return here(source)
        waited = self._lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        if not waited:
            raise _timeout()
        try:
            # A child that died between compiles is replaced once, transparently; one that dies on
            # this template is its failure.
            for replaced in (False, True):
                began = time.monotonic()
                proc = self._child()
                if proc is None:
                    return here(source)
                limit = deadline + (time.monotonic() - began)  # starting a child is not the template's time
                try:
                    return self._ask(proc, source, limit)
                except _Gone:
                    self._drop(proc)
                    if replaced:
                        raise CompileFailed("the template compiler process exited while compiling", "error") from None
            raise CompileFailed("the template compiler process exited while compiling", "error")
        finally:
            self._lock.release()

    def close(self) -> None:
        """Stop the child (it also exits by itself when this process ends)."""
        with self._lock:
            if self._proc is not None:
                self._drop(self._proc)

    @property
    def pid(self) -> int | None:
        """The running child's pid (None when there is none)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _child(self) -> subprocess.Popen[bytes] | None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        if proc is not None:
            self._drop(proc)
        try:
            proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
                                    env=_child_env())
        except OSError as exc:
            log.warning("template compiler process could not start (%s): compiling in this process", exc)
            self._unavailable = True
            return None
        try:  # the child says it is ready once it has imported the sandbox
            ready = _read_message(proc.stdout, time.monotonic() + _START_TIMEOUT_S) if proc.stdout else b""
        except (TimeoutError, _Gone):
            ready = b""
        if ready != b"R":
            log.warning("template compiler process did not start: compiling in this process")
            self._drop(proc)
            self._unavailable = True
            return None
        self._proc = proc
        self.started += 1
        return proc

    def warm(self) -> None:
        """Start the child now when none runs (and no compile is under way), outside any render's deadline."""
        if self._unavailable or self.pid is not None:
            return
        if self._lock.acquire(blocking=False):
            try:
                self._child()
            finally:
                self._lock.release()

    def _ask(self, proc: subprocess.Popen[bytes], source: str, deadline: float) -> CodeType:
        assert proc.stdin is not None and proc.stdout is not None
        payload = source.encode("utf-8", "surrogatepass")
        try:
            proc.stdin.write(len(payload).to_bytes(_LENGTH, "big") + payload)
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Gone() from None
        try:
            answer = _read_message(proc.stdout, deadline)
        except TimeoutError:
            self._drop(proc)  # a compile cannot be interrupted: its process can
            raise _timeout() from None
        status, body = answer[:1], answer[1:]
        if status == b"C":
            code = marshal.loads(body)
            if not isinstance(code, CodeType):
                raise _Gone()
            return code
        if status == b"F":
            failure = json.loads(body)
            raise CompileFailed(str(failure["error"]), str(failure["error_kind"]))
        raise _Gone()

    def _drop(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()  # SIGKILL: it is gone at once
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        if self._proc is proc:
            self._proc = None


def _child_env() -> dict[str, str]:
    """This environment, with the folder this `hubwatch` was imported from first on the child's path:
    the child compiles with the same code as the parent, however the parent found it."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env["PYTHONPATH"]]) if env.get("PYTHONPATH") else root
    return env


def _timeout() -> CompileFailed:
    return CompileFailed("the template did not compile before the render's deadline", "timeout")


def _read_exactly(stream: IO[bytes], n: int, deadline: float) -> bytes:
    fd = stream.fileno()
    chunks: list[bytes] = []
    left = n
    while left:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise _Gone()
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_message(stream: IO[bytes], deadline: float) -> bytes:
    size = int.from_bytes(_read_exactly(stream, _LENGTH, deadline), "big")
    if size > _MAX_ANSWER:
        raise _Gone()
    return _read_exactly(stream, size, deadline)


# The process's compiler: one child, started on the first template compiled.
COMPILER = CompileWorker()
atexit.register(COMPILER.close)


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """The child: compile each template read from `stdin` as the sandbox does, answer on `stdout`."""
    from hubwatch.diff.sandbox import compile_here

    stdout.write(b"\x00\x00\x00\x01R")  # ready
    stdout.flush()
    while True:
        head = stdin.read(_LENGTH)
        if len(head) < _LENGTH:
            return  # the parent closed the pipe (or exited)
        size = int.from_bytes(head, "big")
        source = stdin.read(size).decode("utf-8", "surrogatepass")
        try:
            answer = b"C" + marshal.dumps(compile_here(source))
        except CompileFailed as failure:
            answer = b"F" + json.dumps({"error": failure.error, "error_kind": failure.error_kind}).encode()
        stdout.write(len(answer).to_bytes(_LENGTH, "big") + answer)
        stdout.flush()


def serve_forever() -> None:
    """The child's main: Ctrl-C stops the parent, which closes our pipe; we end with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _serve(sys.stdin.buffer, sys.stdout.buffer)
