#!/usr/bin/env python3
"""long_functions: list C functions longer than a limit (issue 8).

A function is a top-level brace block (depth 0 -> 1) whose opening line, or
the lines just before it, hold a parenthesised declarator: structs, unions,
enums and initialisers at file scope are not functions.  Comments, string and
character literals are blanked before braces are counted, so a brace inside
them does not count.  A function's length is the number of lines from its
name's line to its closing brace, both included.

Usage: long_functions.py [--max N] [--check] [--allow FILE:FUNC ...]
                         [--allow-file F] PATH...
  PATH: files or folders (every .c under a folder).
  --max N         report functions of more than N lines (default 100)
  --check         exit 1 when a reported function is not allowed
  --allow X       FILE:FUNC (FILE as printed) that --check accepts; repeatable
  --allow-file F  one FILE:FUNC a line, '#' starts a comment (the reason:
                  option parsing, or a function still to split)
Output: one line per long function, longest first: FILE:LINE: FUNC LINES
(" (allowed)" when allowed); with --check, allowed entries that name no long
function any more are listed too (so that the list shrinks).
"""
import argparse
import os
import re
import sys

NAME_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*\(')


def blank(text):
    """Return text with comments, strings and char literals replaced by
    spaces (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + c
                       if j - i >= 2 else text[i:j])
            i = j
        elif c == '#' and (i == 0 or text[i - 1] == '\n'):
            # preprocessor line (with continuations): no braces count
            j = i
            while True:
                k = text.find('\n', j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != '\\':
                    break
                j = k + 1
            out.append(re.sub(r'[^\n]', ' ', text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(path):
    """Yield (name, first line, length) of each function in a C file."""
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = blank(f.read()).split('\n')
    depth = 0
    head = []  # depth-0 text since the last ';' or '}'
    start = None
    name = None
    for ln, line in enumerate(lines, 1):
        for ch in line:
            if depth == 0 and ch == '{':
                txt = ''.join(t for _, t in head)
                # a declarator: NAME ( ... ) with no '=' (not an initialiser)
                m = None
                if '=' not in txt and txt.strip().endswith(')'):
                    for m in NAME_RE.finditer(txt):
                        break
                if m is not None:
                    name = m.group(1)
                    # the line of the name
                    off = m.start(1)
                    acc = 0
                    start = ln
                    for hl, t in head:
                        if acc + len(t) > off:
                            start = hl
                            break
                        acc += len(t)
                else:
                    name = None
                depth = 1
                head = []
            elif ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
                if depth == 0:
                    if name is not None:
                        yield name, start, ln - start + 1
                    name = None
                    head = []
            elif depth == 0:
                if ch == ';':
                    head = []
                else:
                    if not head or head[-1][0] != ln:
                        head.append((ln, ''))
                    head[-1] = (ln, head[-1][1] + ch)
        if depth == 0 and head and head[-1][0] == ln:
            head[-1] = (ln, head[-1][1] + ' ')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--max', type=int, default=100)
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--allow', action='append', default=[])
    ap.add_argument('--allow-file')
    ap.add_argument('paths', nargs='+')
    a = ap.parse_args()
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            for d, _, fs in os.walk(p):
                files += [os.path.join(d, f) for f in fs if f.endswith('.c')]
        else:
            files.append(p)
    long = []
    for f in sorted(files):
        for name, start, n in functions(f):
            if n > a.max:
                long.append((n, f, start, name))
    long.sort(key=lambda x: (-x[0], x[1], x[2]))
    bad = 0
    allow = set(a.allow)
    if a.allow_file:
        with open(a.allow_file, encoding='utf-8') as f:
            for line in f:
                line = line.split('#', 1)[0].strip()
                if line:
                    allow.add(line)
    for n, f, start, name in long:
        ok = '%s:%s' % (f, name) in allow
        bad += not ok
        print('%s:%d: %s %d%s' % (f, start, name, n, ' (allowed)' if ok else ''))
    found = set('%s:%s' % (f, name) for _, f, _, name in long)
    for x in sorted(allow - found):
        print('%s: allowed but not over %d lines (remove it from the list)' % (x, a.max))
        bad += 1  # a stale entry would let the function grow back unseen
    if a.check and bad:
        print('long_functions: %d function(s) over %d lines or stale entries' % (bad, a.max),
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
