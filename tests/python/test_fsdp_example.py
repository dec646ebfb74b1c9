"""test_fsdp_example.py EXAMPLE: examples/fsdp_digits.py's refusal.

Where torch has no CUDA (Debian's torch 1.13 is CPU-only), the example must
not train: with and without --check it exits 1 with one message on stderr
naming why (torch.cuda.is_available() is False, FSDP refuses CPU-only
execution, and, where it fails, the FSDP import) and pointing to DDP +
ZeroRedundancyOptimizer in examples/ddp_digits.py; nothing on stdout.
Where torch has CUDA and FSDP imports, --check must exit 0.  A few
seconds; exits 77 (skipped) without torch (1 with INART_NO_SKIP=1).  Prints "N passed, N failed".
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import bad, ok, skip_all, summary  # noqa: E402


def check(name, cond, why=""):
    if cond:
        ok(name)
    else:
        bad(name, why)


def main():
    example = sys.argv[1]
    try:
        import torch
    except ImportError:
        skip_all("test_fsdp_example", "no torch in %s" % sys.executable)
    fsdp_imports = True
    try:
        from torch.distributed.fsdp import FullyShardedDataParallel  # noqa: F401
    except Exception:
        fsdp_imports = False
    cuda = torch.cuda.is_available()
    for argv in ([], ["--check"]):
        r = subprocess.run([sys.executable, example] + argv, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        name = "fsdp_digits %s" % (" ".join(argv) or "(train)")
        if cuda and fsdp_imports:
            if argv:
                check(name + " exits 0 with CUDA", r.returncode == 0,
                      "exit %d: %s" % (r.returncode, r.stderr.strip()[-400:]))
            continue
        err = r.stderr.strip()
        check(name + " exits 1", r.returncode == 1, "exit %d: %s" % (r.returncode, err[-400:]))
        check(name + " one message", len(err.splitlines()) == 1 and not r.stdout.strip(),
              "stdout %r, stderr %r" % (r.stdout[-200:], err[-400:]))
        for want in (["torch.cuda.is_available() is False",
                      "FSDP does not support CPU only execution"] if not cuda else []) + \
                    (["FSDP import fails on Python"] if not fsdp_imports else []) + \
                    ["ZeroRedundancyOptimizer", "examples/ddp_digits.py", "--zero"]:
            check("%s names %r" % (name, want), want in err, err[-400:])
    return summary()


if __name__ == "__main__":
    sys.exit(main())
