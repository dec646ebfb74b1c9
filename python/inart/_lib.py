"""ctypes binding of libinart_worker (include/inart/worker.h).

Only the worker library is loaded: it needs no LP solver.  Where it is
looked for, first found wins:

1. the file named by the environment variable INART_WORKER_LIB;
2. inart/_lib/libinart_worker.so inside this package (copied from the
   checkout's build/ by `pip install ./python`, see python/setup.py);
3. the checkout's build/ when the package is imported from python/ in a
   source tree (PYTHONPATH=python);
4. the system's (after `meson install`: ctypes.util.find_library).

The structs mirror worker.h and err.h; inart_ctx_stats is versioned by size,
so a struct shorter than the library's is filled as far as it goes.
"""
import ctypes
import ctypes.util
import os
import threading

from .errors import InartLibraryError

ERR_MAX = 512


class Err(ctypes.Structure):
    _fields_ = [("msg", ctypes.c_char * ERR_MAX)]


# struct inart_ctx_stats, in header order (counters are only ever appended)
STATS_FIELDS = ("allreduces", "timeouts", "sent", "retransmitted", "retx_asked", "probes",
                "nacks", "chain_gaps", "results", "duplicates", "rescales",
                "local_overflows", "dropped", "stale", "step_notices", "foreign", "stalls",
                "epochs")


class CtxStats(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("reserved", ctypes.c_uint32)] + \
        [(f, ctypes.c_uint64) for f in STATS_FIELDS]


class CtxTree(ctypes.Structure):
    """struct inart_ctx_tree (inart_ctx_trees)."""
    _fields_ = [("ps_ip", ctypes.c_uint32), ("label", ctypes.c_uint32),
                ("state", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


TREE_IDLE, TREE_ANSWERED, TREE_SILENT = 0, 1, 2   # INART_CTX_TREE_*


_lock = threading.Lock()
_lib = None
_path = None


def _candidates():
    env = os.environ.get("INART_WORKER_LIB")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "_lib", "libinart_worker.so")]
    build = os.environ.get("INART_BUILD_DIR") or os.path.join(here, "..", "..", "build")
    out.append(os.path.normpath(os.path.join(build, "libinart_worker.so")))
    sys_lib = ctypes.util.find_library("inart_worker")
    if sys_lib:
        out.append(sys_lib)
    return out, False


def load():
    """The loaded library (a ctypes.CDLL with prototypes set), loaded once."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        paths, explicit = _candidates()
        tried = []
        for p in paths:
            if explicit or os.path.sep not in p or os.path.exists(p):
                try:
                    lib = ctypes.CDLL(p, use_errno=True)
                except OSError as e:
                    tried.append("%s (%s)" % (p, e))
                    continue
                _prototypes(lib, p)
                _lib, _path = lib, p
                return lib
            tried.append("%s (missing)" % p)
        raise InartLibraryError(
            "libinart_worker.so not found; tried: %s.  Build the C library "
            "(meson setup build && ninja -C build), then pip install ./python from the "
            "checkout, or set INART_WORKER_LIB to the library's path" % "; ".join(tried))


def path():
    """Path of the loaded library (loads it)."""
    load()
    return _path


def _prototypes(lib, p):
    try:
        lib.inart_ctx_create.argtypes = [ctypes.c_char_p] * 5 + [ctypes.c_int,
                                                                 ctypes.POINTER(Err)]
        lib.inart_ctx_create.restype = ctypes.c_void_p
        lib.inart_allreduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                        ctypes.c_int]
        lib.inart_allreduce.restype = ctypes.c_int
        lib.inart_ctx_stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(CtxStats)]
        lib.inart_ctx_stats.restype = ctypes.c_int
        lib.inart_ctx_destroy.argtypes = [ctypes.c_void_p]
        lib.inart_ctx_destroy.restype = None
        lib.inart_ctx_step.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32),
                                       ctypes.POINTER(ctypes.c_uint32)]
        lib.inart_ctx_step.restype = ctypes.c_int
        lib.inart_ctx_resync.argtypes = [ctypes.c_void_p]
        lib.inart_ctx_resync.restype = ctypes.c_int
        lib.inart_ctx_trees.argtypes = [ctypes.c_void_p, ctypes.POINTER(CtxTree), ctypes.c_int]
        lib.inart_ctx_trees.restype = ctypes.c_int
    except AttributeError as e:
        raise InartLibraryError("%s is not libinart_worker: %s" % (p, e)) from None
