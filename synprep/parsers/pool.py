"""Ordered parallel parsing over worker processes.

Why processes: the UDPipe binding holds the GIL while it parses, and one stanza
pipeline should own one GPU, so threads would not help in either case.

Algorithm. Items are cut into chunks of ``chunk_size``; each chunk is sent to a
``ProcessPoolExecutor`` (start method ``spawn``: safe with CUDA and with torch's
thread pools) whose workers each build one parser with the given options, once,
in their initializer. At most ``2 * workers`` chunks are in flight, so memory
stays bounded on any corpus size; results are yielded chunk by chunk in
submission order, so the output order is the input order.

Per-worker options (e.g. one CUDA device a worker) are handed out through a queue
that each worker reads once at start-up.

Failure handling, so that no sentence is lost and nothing crashes:

* an error while a worker builds its parser (missing model, bad option) is kept
  and raised, with its message, when that worker gets its first chunk;
* if a worker process dies (a segfault inside a native parser), every chunk in
  flight is lost with it. The pool is restarted and those chunks are rerun one at
  a time; a chunk that kills a worker again is bisected, and a single sentence
  that kills a worker on its own becomes a ``worker-crash`` reject.
"""

from __future__ import annotations

import collections
import logging
import multiprocessing as mp
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Iterable, Iterator

from .. import registry
from ..errors import SynprepError
from .base import WORKER_CRASH, ParseResult

log = logging.getLogger("synprep.parsers")

_PARSER = None
_INIT_ERROR: BaseException | None = None


def _init_worker(backend: str, options: dict, per_worker) -> None:
    global _PARSER, _INIT_ERROR
    try:
        opts = dict(options)
        if per_worker is not None:
            opts.update(per_worker.get())
        _PARSER = parser_class(backend)(**opts)
    except BaseException as e:  # reported on the first chunk, with its message
        _INIT_ERROR = e


def parser_class(backend: str):
    """A registered backend name, or ``package.module:Class`` (for tests and plug-ins
    that are not registered in the child process)."""
    if ":" in backend:
        import importlib

        mod, _, cls = backend.partition(":")
        return getattr(importlib.import_module(mod), cls)

    return registry.get("parser", backend)


def _run_chunk(chunk: list[tuple[str, str]]) -> list[tuple]:
    if _INIT_ERROR is not None:
        raise SynprepError(str(_INIT_ERROR)) from None
    return [tuple(r) for r in _PARSER.parse(chunk)]


def chunked(items: Iterable[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    it = iter(items)
    while True:
        chunk = list(islice(it, size))
        if not chunk:
            return
        yield chunk


class OrderedPool:
    """N worker processes that each hold a parser; :meth:`parse` keeps input order."""

    def __init__(self, backend: str, options: dict, workers: int, *, chunk_size: int = 256,
                 per_worker: list[dict] | None = None):
        if workers < 1:
            raise SynprepError(f"workers must be >= 1, got {workers}")
        if per_worker is not None and len(per_worker) != workers:
            raise SynprepError("per_worker options must have one entry a worker")
        self.backend = backend
        self.options = dict(options)
        self.workers = workers
        self.chunk_size = max(1, chunk_size)
        self.per_worker = per_worker
        self._ctx = mp.get_context("spawn")
        self._pool: ProcessPoolExecutor | None = None
        self.restarts = 0

    def _start(self) -> ProcessPoolExecutor:
        queue = None
        if self.per_worker is not None:
            queue = self._ctx.Queue()
            for opts in self.per_worker:
                queue.put(opts)
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._ctx,
            initializer=_init_worker,
            initargs=(self.backend, self.options, queue),
        )
        return self._pool

    def _restart(self) -> ProcessPoolExecutor:
        self.restarts += 1
        log.warning("a %s worker process died; restarting the pool (restart %d)", self.backend, self.restarts)
        self.close()
        return self._start()

    def parse(self, items: Iterable[tuple[str, str]]) -> Iterator[ParseResult]:
        if self._pool is None:
            self._start()
        pending: collections.deque[tuple[list, Future]] = collections.deque()
        for chunk in chunked(items, self.chunk_size):
            try:
                fut = self._pool.submit(_run_chunk, chunk)  # type: ignore[union-attr]
            except BrokenProcessPool:
                # a worker died before any result said so: the chunks in flight
                # carry the error; take them (rerun in isolation), then resubmit
                while pending:
                    yield from self._take(pending)
                if self._pool is None or getattr(self._pool, "_broken", False):
                    self._restart()
                fut = self._pool.submit(_run_chunk, chunk)  # type: ignore[union-attr]
            pending.append((chunk, fut))
            while len(pending) >= 2 * self.workers:
                yield from self._take(pending)
        while pending:
            yield from self._take(pending)

    def _take(self, pending: collections.deque) -> Iterator[ParseResult]:
        chunk, fut = pending.popleft()
        try:
            rows = fut.result()
        except BrokenProcessPool:
            # every chunk in flight died with the pool; rerun them one at a time
            lost = [chunk] + [c for c, _f in pending]
            pending.clear()
            self._restart()
            for c in lost:
                yield from self._isolated(c)
            return
        for r in rows:
            yield ParseResult(*r)

    def _isolated(self, chunk: list[tuple[str, str]]) -> Iterator[ParseResult]:
        """Run ``chunk`` alone in the pool; bisect it when it kills a worker."""
        assert self._pool is not None
        try:
            rows = self._pool.submit(_run_chunk, chunk).result()
        except BrokenProcessPool:
            self._restart()
            if len(chunk) == 1:
                sid = chunk[0][0]
                log.warning("sentence %s kills the %s worker process; rejected", sid, self.backend)
                yield ParseResult(sid, None, f"{WORKER_CRASH}: the {self.backend} worker process died on this sentence")
                return
            mid = len(chunk) // 2
            yield from self._isolated(chunk[:mid])
            yield from self._isolated(chunk[mid:])
            return
        for r in rows:
            yield ParseResult(*r)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
