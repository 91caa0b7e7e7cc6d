"""The garbage collector around one command: paused while the command loads, then its loaded heap
frozen out of the collector's passes, and the caller's settings back afterwards.

Loading the checker (and, for ``nika run``, the engine) and compiling the workflow allocate
objects that all live as long as the command, so each collection meanwhile finds nothing to free:
:func:`paused` turns the collector off, and the callback it gives (``loaded``) turns it back on
with what is loaded so far frozen (:func:`gc.freeze`: a full pass then walks only what the command
allocates after). On leaving, the collector is as it was (the tests run many commands in one
process). A caller that froze objects of its own (a server that forks) keeps them frozen: then
nothing is frozen or unfrozen here (``gc.unfreeze()`` would also release the caller's).

:func:`freeze_at_exit` is for a command that is the process: at interpreter exit the collector
makes full passes over every object still alive (tens of ms after a ``nika run``, as long as the
whole check of a small file), and a frozen heap leaves them nothing to walk.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Thresholds = tuple[int, int, int]

_LOADED: ContextVar[Callable[[Thresholds | None], None] | None] = ContextVar("nika_heap_loaded", default=None)


@contextlib.contextmanager
def paused() -> Iterator[Callable[..., None]]:
    """The collector off until ``loaded(thresholds=None)`` is called (once; later calls do
    nothing), which freezes what is loaded and sets the collector's thresholds for the rest."""
    was, thresholds = gc.isenabled(), gc.get_threshold()
    ours = gc.get_freeze_count() == 0
    gc.disable()
    done = False

    def loaded(new: Thresholds | None = None) -> None:
        nonlocal done
        if done:
            return
        done = True
        if ours:
            gc.freeze()
        if new is not None:
            gc.set_threshold(*new)
        if was:
            gc.enable()

    token = _LOADED.set(loaded)
    try:
        yield loaded
    finally:
        _LOADED.reset(token)
        if ours:
            gc.unfreeze()
        gc.set_threshold(*thresholds)
        if was:
            gc.enable()


def loaded(thresholds: Thresholds | None = None) -> None:
    """The ``loaded`` callback of the innermost :func:`paused` (nothing outside one)."""
    callback = _LOADED.get()
    if callback is not None:
        callback(thresholds)


_EXIT_FREEZE = False


def freeze_at_exit() -> None:
    """Freeze the heap at interpreter exit (registered once; only for a command that is the process)."""
    global _EXIT_FREEZE
    if not _EXIT_FREEZE:
        import atexit

        atexit.register(gc.freeze)
        _EXIT_FREEZE = True
