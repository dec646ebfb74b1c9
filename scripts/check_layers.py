#!/usr/bin/env python3
"""check_layers.py: fail on an include that points up the layer order.

    check_layers.py --root SRCROOT [--out FILE] LAYER...

Each LAYER is NAME:DIR=FILE,FILE,... given lowest first (meson.build passes
them from its module lists; docs/architecture.md explains the order).  FILEs
are paths relative to SRCROOT and must lie in DIR.  The check:

  * every .c/.h file under src/ belongs to exactly one layer (a file no list
    names is an error: it would be neither built nor checked);
  * every `#include "..."` in a layer's file resolves (relative to the
    including file, then to include/ and src/, as the compiler does) to a file
    of the same layer or of a layer below, or to the public headers in
    include/.  An include of a higher layer's header, or of a file that does
    not exist, is reported as FILE:LINE and the check exits 1;
  * every such include is written in the one style: a project header by its
    path under src/ ("dp/wire.h", "cp/model/plan.h"), a public header by its
    path under include/ ("inart/worker.h"); a relative path ("../x.h") or a
    bare same-folder name ("x.h") is reported with the spelling to use.

On success it writes FILE (--out), an empty header the libraries depend on,
so that ninja runs the check before it compiles anything.  Python standard
library only.
"""
import argparse
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def parse_layers(specs, root):
    layers = []  # (name, dir, [files])
    owner = {}  # relative path -> layer index
    errors = []
    for i, spec in enumerate(specs):
        head, _, files = spec.partition("=")
        name, _, ldir = head.partition(":")
        if not name or not ldir:
            errors.append(f"bad layer spec '{spec}' (NAME:DIR=FILE,...)")
            layers.append((spec, "", []))
            continue
        flist = [f for f in files.split(",") if f]
        for f in flist:
            f = os.path.normpath(f)
            if os.path.dirname(f) != os.path.normpath(ldir):
                errors.append(f"{f}: listed in layer {name} but not in its folder {ldir}")
            if f in owner:
                errors.append(f"{f}: listed in layers {layers[owner[f]][0]} and {name}")
            if not os.path.isfile(os.path.join(root, f)):
                errors.append(f"{f}: listed in layer {name} but missing")
            owner[f] = i
        layers.append((name, ldir, flist))
    return layers, owner, errors


def resolve(root, including, target):
    """The path (relative to root) the compiler would open, or None."""
    for base in (os.path.dirname(including), "include", "src"):
        cand = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def canonical(path):
    """The one spelling of an include of path (relative to the root)."""
    for top in ("src", "include"):
        if path.startswith(top + os.sep):
            return path[len(top) + 1:].replace(os.sep, "/")
    return path


def check(root, specs):
    layers, owner, errors = parse_layers(specs, root)
    for dirpath, _, names in sorted(os.walk(os.path.join(root, "src"))):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(dirpath, n), root)
                if rel not in owner:
                    errors.append(f"{rel}: in no layer (add it to a module list in meson.build)")
    for f, li in sorted(owner.items()):
        path = os.path.join(root, f)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                got = resolve(root, f, inc)
                if got is None:
                    errors.append(f'{f}:{lineno}: #include "{inc}" names no file')
                elif (canon := canonical(got)) != inc:
                    errors.append(f'{f}:{lineno}: #include "{inc}": write it "{canon}" '
                                  "(the path under src/ or include/)")
                elif got.startswith("include" + os.sep):
                    continue  # the public API: declarations, allowed everywhere
                elif got not in owner:
                    errors.append(f'{f}:{lineno}: #include "{inc}" ({got}) is in no layer')
                elif owner[got] > li:
                    errors.append(
                        f'{f}:{lineno}: #include "{inc}": layer {layers[li][0]} may not '
                        f"include {got} of layer {layers[owner[got]][0]}, which is above it "
                        f"(order: {' < '.join(l[0] for l in layers)})")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--out")
    ap.add_argument("layers", nargs="+")
    a = ap.parse_args()
    errors = check(a.root, a.layers)
    if errors:
        for e in errors:
            print(f"check_layers: {e}", file=sys.stderr)
        print(f"check_layers: {len(errors)} error(s)", file=sys.stderr)
        if a.out and os.path.exists(a.out):
            os.remove(a.out)
        return 1
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("/* generated by scripts/check_layers.py: the layer check passed */\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
