"""Exceptions of the inart package, one per cause.

Every error of the C worker API (include/inart/worker.h: 0 or a negative
errno, plus a one-line message from inart_ctx_create) becomes one of these.
All derive from InartError (itself a RuntimeError, so code that catches what
DDP re-raises from a comm hook still sees the class name and the message),
and each also derives from the standard exception a caller would expect
(TimeoutError, ValueError, TypeError, OSError, MemoryError).
"""
import errno as _errno
import os as _os

__all__ = [
    "InartError", "InartConfigError", "InartRankError", "InartTimeoutError",
    "InartStaleError", "InartValueError", "InartDtypeError", "InartLayoutError",
    "InartIOError", "InartAddressError", "InartMemoryError", "InartLibraryError",
    "InartStateError", "error_for",
]


class InartError(RuntimeError):
    """Any error of the InArt Python package.  `errno` is the C API's error
    (positive) or None when the check was made in Python."""

    def __init__(self, message, errno=None):
        super().__init__(message)
        self.errno = errno


class InartConfigError(InartError, ValueError):
    """The topology, jobs, plan or deployment files, or the job id, are not
    usable together (a plan for another job, a job not in the plan, ...)."""


class InartRankError(InartConfigError):
    """The rank or world size (RANK, WORLD_SIZE, the process group) does not
    match the job in the plan."""


class InartTimeoutError(InartError, TimeoutError):
    """An all-reduce did not finish in time: a PS or switch on the job's
    trees does not answer (or a worker of the job did not take part)."""


class InartStaleError(InartError):
    """The context fell behind the other workers of the job (-ESTALE); every
    worker must resynchronize (State.resync) before the next all-reduce."""


class InartValueError(InartError, ValueError):
    """The values cannot be all-reduced (NaN or infinity, empty buffer...)."""


class InartDtypeError(InartError, TypeError):
    """The tensor is not float32 (or not a tensor or array at all)."""


class InartLayoutError(InartError, ValueError):
    """The tensor is not contiguous, not writable or not in host memory."""


class InartIOError(InartError, OSError):
    """A socket error."""


class InartAddressError(InartIOError):
    """The worker's address in the deployment cannot be bound here (not on
    this host or namespace, or already used by another worker)."""


class InartMemoryError(InartError, MemoryError):
    """Out of memory in the C library."""


class InartLibraryError(InartError, ImportError):
    """libinart_worker.so was not found or does not have the expected API."""


class InartStateError(InartError):
    """The object cannot be used now (closed, or an earlier all-reduce
    failed and the workers have not resynchronized)."""


# errno -> class, for all-reduce calls (inart_allreduce) and for context
# creation (inart_ctx_create): the C API's documented errors first.
_ALLREDUCE = {
    _errno.ETIMEDOUT: InartTimeoutError,
    _errno.EINVAL: InartValueError,
    _errno.EIO: InartIOError,
    _errno.ENOMEM: InartMemoryError,
    _errno.ESTALE: InartStaleError,
}
_CREATE = {
    _errno.EINVAL: InartConfigError,
    _errno.ENOENT: InartConfigError,
    _errno.ERANGE: InartConfigError,
    _errno.EADDRNOTAVAIL: InartAddressError,
    _errno.EADDRINUSE: InartAddressError,
    _errno.EACCES: InartAddressError,
    _errno.ENOMEM: InartMemoryError,
}


def error_for(rc, message, creating=False):
    """The exception for a negative (or positive) errno `rc` of the C API,
    with `message` (the strerror text is appended)."""
    e = abs(rc)
    cls = (_CREATE if creating else _ALLREDUCE).get(e)
    if cls is None:
        cls = InartIOError if e in (_errno.ENETUNREACH, _errno.EHOSTUNREACH,
                                    _errno.ECONNREFUSED, _errno.ENOBUFS) else InartError
    return cls("%s (%s)" % (message, _os.strerror(e) if e else "error"), errno=e)
