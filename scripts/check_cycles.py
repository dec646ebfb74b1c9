#!/usr/bin/env python3
"""check_cycles: no two files of src/ call each other (issue 23, point 6).

The graph: file A -> file B when a function of A (or a file-scope
initialiser of A) names a function that B defines and does not make static.
A cycle of that graph (A -> B -> ... -> A) is a set of files that cannot be
read, tested or moved one at a time; every edge should go one way, with what
both sides need in a file both use.

How it reads C: comments, string and character literals and preprocessor
lines are blanked (long_functions.blank); a function definition is a
top-level brace block whose head (the text since the last ';' or '}' at file
scope) ends in ')' and holds no '=', its name the first NAME( of the head,
non-static when the head lacks the word static.  A use is an identifier
anywhere else in the file that is not a member (after '.' or '->') nor a
tag (after struct, union or enum).  Not seen: calls written inside macro
bodies (their expansion's file is not known without the preprocessor) and
static inline functions of headers (each includer has its own copy).

Usage: check_cycles.py [--root DIR] [--allow-file F] [--list]
  --root DIR      the source root (default .): every .c under DIR/src
  --allow-file F  cycles accepted for now, one a line: the files of the
                  cycle separated by spaces, '#' starts a comment (the
                  reason); a cycle whose files are all on one line passes.
                  An entry that matches no cycle any more is an error (so
                  that the list shrinks).
  --list          print every edge (A -> B: functions) and exit 0
Output: for each cycle not allowed, its files and the edges among them with
the functions that make them; exit 1 if there is one (or a stale entry).
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from long_functions import NAME_RE, blank  # noqa: E402

IDENT_RE = re.compile(r'(->|\.|\b(?:struct|union|enum)\s+)?\s*\b([A-Za-z_][A-Za-z0-9_]*)\b')


def scan(text):
    """(definitions, uses) of a blanked C file: definitions a dict name ->
    static (bool); uses the set of identifiers named outside the
    definitions' own names (members and tags left out)."""
    defs = {}
    depth = 0
    head_start = 0  # offset of the depth-0 head since the last ';' or '}'
    name_spans = []  # (start, end) of the defined names
    for i, ch in enumerate(text):
        if ch == '{':
            if depth == 0:
                head = text[head_start:i]
                if '=' not in head and head.strip().endswith(')'):
                    m = NAME_RE.search(head)
                    if m is not None:
                        defs[m.group(1)] = re.search(r'\bstatic\b', head[:m.start(1)]) is not None
                        name_spans.append((head_start + m.start(1), head_start + m.end(1)))
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                head_start = i + 1
        elif ch == ';' and depth == 0:
            head_start = i + 1
    uses = set()
    spans = iter(name_spans)
    nxt = next(spans, None)
    for m in IDENT_RE.finditer(text):
        while nxt is not None and nxt[1] <= m.start(2):
            nxt = next(spans, None)
        if nxt is not None and nxt[0] == m.start(2):
            continue  # a definition's own name
        if m.group(1):
            continue  # a member or a tag
        uses.add(m.group(2))
    return defs, uses


def graph(root):
    """{file: {other file: sorted functions of it that file names}} over
    every .c under root/src (paths relative to root)."""
    files = []
    for d, _, fs in os.walk(os.path.join(root, 'src')):
        files += [os.path.relpath(os.path.join(d, f), root) for f in fs if f.endswith('.c')]
    files.sort()
    defs, uses = {}, {}
    for f in files:
        with open(os.path.join(root, f), encoding='utf-8', errors='replace') as fh:
            defs[f], uses[f] = scan(blank(fh.read()))
    where = {}  # non-static function -> files defining it
    for f in files:
        for name, static in defs[f].items():
            if not static:
                where.setdefault(name, []).append(f)
    g = {f: {} for f in files}
    for f in files:
        for name in uses[f]:
            if name in defs[f]:
                continue  # its own (or a static of the same name)
            for b in where.get(name, []):
                g[f].setdefault(b, []).append(name)
    for f in files:
        for b in g[f]:
            g[f][b].sort()
    return g


def cycles(g):
    """The strongly connected components of more than one file (Tarjan),
    each a sorted list, in order of their first file."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # iterative: the graph may be deep
        work = [(v, iter(sorted(g[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            u, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on:
                    low[u] = min(low[u], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[u])
                if low[u] == index[u]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == u:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    out.sort()
    return out


def read_allow(path):
    """The allowed cycles: (line number, set of files, text) of each entry."""
    allow = []
    with open(path, encoding='utf-8') as f:
        for ln, line in enumerate(f, 1):
            files = line.split('#', 1)[0].split()
            if files:
                allow.append((ln, set(files), ' '.join(files)))
    return allow


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default='.')
    ap.add_argument('--allow-file')
    ap.add_argument('--list', action='store_true')
    a = ap.parse_args()
    g = graph(a.root)
    if a.list:
        for f in sorted(g):
            for b in sorted(g[f]):
                print('%s -> %s: %s' % (f, b, ', '.join(g[f][b])))
        return 0
    allow = read_allow(a.allow_file) if a.allow_file else []
    used = set()
    bad = 0
    for comp in cycles(g):
        hit = [ln for ln, fs, _ in allow if set(comp) <= fs]
        if hit:
            used.update(hit)
            print('allowed (%s:%d): %s' % (a.allow_file, hit[0], ' '.join(comp)))
            continue
        bad += 1
        print('cycle: %s' % ' '.join(comp))
        for f in comp:
            for b in comp:
                if b in g[f]:
                    print('  %s -> %s: %s' % (f, b, ', '.join(g[f][b])))
    for ln, _, text in allow:
        if ln not in used:
            print('%s:%d: %s: allowed but no longer a cycle (remove it from the list)' %
                  (a.allow_file, ln, text))
            bad += 1
    if bad:
        print('check_cycles: %d cycle(s) or stale entries' % bad, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
