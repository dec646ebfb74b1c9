"""inart: all-reduce through the InArt data plane from Python.

    import inart
    inart.init("topo.json", "jobs.json", "plan.json", deploy="deploy.json", job="j0")
    inart.allreduce(tensor)            # in-place sum over the job's workers
    inart.allreduce(tensor, average=True)

`init` makes the default Context (inart.core.Context); every argument
defaults to the environment: INART_TOPO, INART_JOBS, INART_PLAN,
INART_DEPLOY, INART_JOB, RANK, WORLD_SIZE, INART_TIMEOUT (seconds).
`allreduce` initializes from the environment when `init` was not called.
PyTorch DDP: `inart.torch.allreduce_hook` (import inart.torch).
docs/python.md is the manual.
"""
import os

from .core import Context, buffer_of
from .errors import *  # noqa: F401,F403 (the exception classes)
from .errors import InartConfigError, InartStateError

__version__ = "0.1.0"

_default = None


def _from_env(name, given):
    if given is not None:
        return given
    return os.environ.get(name) or None


def init(topo=None, jobs=None, plan=None, deploy=None, job=None, rank=None, world_size=None,
         timeout=None):
    """Create the default context (closing a previous one) and return it."""
    global _default
    topo, jobs, plan = (_from_env("INART_TOPO", topo), _from_env("INART_JOBS", jobs),
                        _from_env("INART_PLAN", plan))
    missing = [n for n, v in (("topo/INART_TOPO", topo), ("jobs/INART_JOBS", jobs),
                              ("plan/INART_PLAN", plan)) if not v]
    if missing:
        raise InartConfigError("inart.init: no %s" % ", ".join(missing))
    if timeout is None:
        timeout = float(os.environ.get("INART_TIMEOUT") or 10.0)
    finalize()
    _default = Context(topo, jobs, plan, deploy=_from_env("INART_DEPLOY", deploy), job=job,
                       rank=rank, world_size=world_size, timeout=timeout)
    return _default


def context():
    """The default context (initialized from the environment if needed)."""
    if _default is None or _default.closed:
        init()
    return _default


def allreduce(tensor, average=False, timeout=None):
    """Sum a float32 tensor (torch.Tensor or numpy.ndarray) in place over the
    job's workers through the installed plan and return it."""
    return context().allreduce(tensor, average=average, timeout=timeout)


def finalize():
    """Close the default context (no-op without one)."""
    global _default
    if _default is not None:
        _default.close()
        _default = None


__all__ = ["Context", "init", "context", "allreduce", "finalize", "buffer_of",
           "InartStateError"] + [n for n in dir() if n.startswith("Inart")]
