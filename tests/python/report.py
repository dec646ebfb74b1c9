"""report: the result lines of the Python tests that run as one program
(test_netns.py, test_mininet.py): "ok NAME" or "FAIL NAME" with the detail
indented, and at the end the closing line "N passed, N failed".  A test
that cannot run says why and exits 77 (meson's skip), or fails with
INART_NO_SKIP=1 (CI: a skipped check there is a failure)."""
import os
import sys

counts = {"passed": 0, "failed": 0}


def ok(name):
    counts["passed"] += 1
    print("ok %s" % name, flush=True)


def bad(name, detail=""):
    counts["failed"] += 1
    print("FAIL %s" % name, flush=True)
    if detail:
        print("  | " + str(detail).rstrip().replace("\n", "\n  | "), flush=True)


def skip_all(prog, why):
    print("%s: %s, all checks skipped" % (prog, why))
    if os.environ.get("INART_NO_SKIP") == "1":
        print("%d passed, %d failed, 0 skipped (INART_NO_SKIP=1)"
              % (counts["passed"], counts["failed"] + 1))
        sys.exit(1)
    print("%d passed, %d failed, all skipped" % (counts["passed"], counts["failed"]))
    sys.exit(77)


def summary():
    """Print the closing line; the exit status (1 if anything failed)."""
    print("%d passed, %d failed" % (counts["passed"], counts["failed"]))
    return 1 if counts["failed"] else 0
