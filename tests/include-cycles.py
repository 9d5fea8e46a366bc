#!/usr/bin/env python3
# tests/include-cycles.py [SRCDIR [DOC]]: the module structure of src/, as
# doc/architecture.md states it (issues 17 and 25). Fails on
#  - an include cycle between modules. A module is a .c/.h pair, named by
#    its path without the extension (daemon/core/registry); a private header
#    is part of its module: X_int.h of X, and internal.h of the module whose
#    header of the same directory it includes (lib/internal.h of
#    lib/rtsched). Includes are rooted at src/ ("daemon/core/registry.h") or,
#    failing that, relative to the including file;
#  - an include between two rows of DOC's folder table ("The folders") that
#    the including row's "may use" column does not name, unless DOC's table
#    of known exceptions lists it; an exception that no include makes any
#    more (remove its row); a file of src/ that no row holds;
#  - a call that writes scheduling (sched_setattr, setpriority, ...) in a
#    file that DOC's "writers-of-scheduling" comment does not list, or a
#    listed file without one.
# Prints what it checked and every failure, then exits 1 if any, else 0.
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_root():
    if len(sys.argv) > 1:
        return sys.argv[1]
    top = os.environ.get('top_srcdir') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    return os.path.join(top, 'src')


def doc_path(root):
    return sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, '..', 'doc', 'architecture.md')


TICKED = re.compile(r'`([^`]+)`')


def table_rows(text, heading):
    """The cells of each row of the first table after the line HEADING."""
    lines = text.splitlines()
    try:
        i = next(k for k, l in enumerate(lines) if l.strip() == heading)
    except StopIteration:
        return None
    while i < len(lines) and not lines[i].startswith('|'):
        i += 1
    rows = []
    for l in lines[i + 2:]:  # the header and its rule
        if not l.startswith('|'):
            break
        rows.append([c.strip() for c in l.strip().strip('|').split('|')])
    return rows


def read_doc(path):
    """(rows, exceptions, writers): rows maps a row's name to its src/
    relative path and the names it may use; exceptions maps (from, to) to
    its text; writers is the set of files allowed to write scheduling."""
    with open(path, encoding='utf-8') as fh:
        text = fh.read()
    folders = table_rows(text, '## The folders')
    if not folders:
        raise SystemExit(f'include-cycles: no folder table under "## The folders" in {path}')
    rows = {}
    for cells in folders:
        uses = set(TICKED.findall(cells[2]))
        for p in TICKED.findall(cells[0]):
            rel = p[len('src/'):].rstrip('/') if p.startswith('src/') else None
            if rel is None:
                raise SystemExit(f'include-cycles: {path}: a row names {p!r}, not a path under src/')
            rows[os.path.basename(rel)] = (rel, uses)
    exceptions = {}
    for cells in table_rows(text, 'Known exceptions: dependencies that exist and should not. Each is allowed') or []:
        pair = TICKED.findall(cells[0])
        if len(pair) != 2:
            raise SystemExit(f'include-cycles: {path}: an exception row is not `from` -> `to`: {cells[0]}')
        exceptions[tuple(pair)] = cells[1]
    m = re.search(r'<!-- writers-of-scheduling: ([^>]*)-->', text)
    writers = set(m.group(1).split()) if m else set()
    return rows, exceptions, writers


def row_of(rows, path):
    """The name of the most specific row holding PATH (src/-relative), or None."""
    best = None
    for name, (rel, _) in rows.items():
        if path == rel or path.startswith(rel + '/'):
            if best is None or len(rel) > len(rows[best][0]):
                best = name
    return best


# Calls that set a thread's policy, priority, nice value or affinity.
SCHED_WRITE = re.compile(r'\b(sched_setattr|sched_setscheduler|sched_setparam|sched_setaffinity|setpriority|nice|'
                         r'pthread_setschedparam|pthread_setschedprio|pthread_setaffinity_np|'
                         r'pthread_attr_setschedpolicy|pthread_attr_setschedparam|pthread_attr_setaffinity_np)\s*\(|'
                         r'\b(SYS_sched_set\w+)\b')
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def check_layers(root, doc, files):
    """Failures of the folder table, its exceptions and the writers of scheduling."""
    rows, exceptions, writers = read_doc(doc)
    fails, used = [], set()
    for name, (rel, uses) in sorted(rows.items()):
        if not os.path.exists(os.path.join(root, rel)):
            fails.append(f'the row {name} names src/{rel}, which does not exist')
        for u in sorted(uses - set(rows)):
            fails.append(f'the row {name} may use {u!r}, which is no row')
    for path, incs in sorted(files.items()):
        a = row_of(rows, path)
        if a is None:
            fails.append(f'src/{path} is in no row of the folder table')
            continue
        for t in sorted(incs):
            b = row_of(rows, t)
            if b is None or b == a:
                continue
            if b in rows[a][1]:
                continue
            if (a, b) in exceptions:
                used.add((a, b))
                continue
            fails.append(f'{a} -> {b} ({path} includes {t}) is not in the "may use" of {a}')
    for pair in sorted(set(exceptions) - used):
        fails.append(f'the known exception {pair[0]} -> {pair[1]} is gone: remove its row')
    written = {}
    for path in files:
        if path.endswith('.c'):
            with open(os.path.join(root, path), encoding='utf-8', errors='replace') as fh:
                m = SCHED_WRITE.search(COMMENT_OR_STRING.sub('', fh.read()))
            if m:
                written[path] = m.group(1) or m.group(2)
    for path in sorted(set(written) - writers):
        fails.append(f'src/{path} writes scheduling ({written[path]}) but is not in the writers-of-scheduling list')
    for path in sorted(writers - set(written)):
        fails.append(f'src/{path} is in the writers-of-scheduling list but writes none')
    fails += check_private(root, files)
    print(f'include-cycles: {len(rows)} rows of {doc}, {len(exceptions)} known exception(s), '
          f'{len(writers)} writers of scheduling')
    return fails


def check_private(root, files):
    """A private header X_int.h is its module's own: only X.c and X_*.c of
    its folder include it (every file of a folder with one public header,
    as watchdog/ is the safety module), so no other module sees the layout
    it holds (registry_int.h: the registry's links, issue 25)."""
    fails = []
    for path, incs in sorted(files.items()):
        for t in sorted(incs):
            if not t.endswith('_int.h') or t == path:
                continue
            folder, stem = os.path.dirname(t), os.path.basename(t)[:-len('_int.h')]
            public = [h for h in os.listdir(os.path.join(root, folder))
                      if h.endswith('.h') and not h.endswith('_int.h')]
            mine = os.path.basename(path)
            if os.path.dirname(path) == folder and (mine == stem + '.c' or mine.startswith(stem + '_') or
                                                    len(public) == 1):
                continue
            fails.append(f'src/{path} includes src/{t}, the private header of {folder}/{stem}: go through '
                         f'{stem}.h (or, from the module itself, name the file {stem}_*.c)')
    return fails


def resolve(root, here, inc):
    """The header's path below root, without .h, or None if it is not ours."""
    for cand in (inc, os.path.join(here, inc)):
        path = os.path.normpath(os.path.join(root, cand))
        if os.path.isfile(path):
            return os.path.relpath(path, root)[:-2]
    return None


def main():
    root = source_root()
    edges, incl = {}, {}
    for dirpath, _, files in os.walk(root):
        here = os.path.relpath(dirpath, root)
        for f in files:
            if not f.endswith(('.c', '.h')):
                continue
            node = os.path.normpath(os.path.join(here, f))[:-2]
            with open(os.path.join(dirpath, f), encoding='utf-8', errors='replace') as fh:
                incs = INCLUDE.findall(fh.read())
            edges.setdefault(node, set())
            path = os.path.normpath(os.path.join(here, f))
            incl[path] = set()
            for inc in incs:
                if inc.endswith('.h'):
                    t = resolve(root, here, inc)
                    if t is not None:
                        edges[node].add(t)
                        incl[path].add(t + '.h')
    if not edges:
        print(f'include-cycles: no sources under {root}')
        return 2

    # private headers join their module
    owner = {}
    for node, targets in edges.items():
        base = os.path.basename(node)
        if base.endswith('_int') and node[:-4] in edges:
            owner[node] = node[:-4]
        elif base == 'internal':
            api = sorted(t for t in targets if os.path.dirname(t) == os.path.dirname(node) and t != node)
            if len(api) == 1:
                owner[node] = api[0]
    module = lambda n: owner.get(n, n)
    graph = {}
    for node, targets in edges.items():
        m = module(node)
        graph.setdefault(m, set()).update(module(t) for t in targets if module(t) != m)

    # Tarjan's strongly connected components, iteratively
    index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))

    merged = ', '.join(f'{k} -> {v}' for k, v in sorted(owner.items()))
    print(f'include-cycles: {len(graph)} modules under {root}; private headers: {merged or "none"}')
    for comp in sccs:
        inner = [f'{a} -> {b}' for a in comp for b in sorted(graph[a]) if b in comp]
        print(f'FAIL - a cycle of {len(comp)} modules: {" ".join(comp)}')
        print(f'#   includes inside it: {"; ".join(inner)}')
    if not sccs:
        print('ok - no include cycle between modules')
    fails = check_layers(root, doc_path(root), incl)
    for f in fails:
        print(f'FAIL - {f}')
    if not fails:
        print('ok - every include between folders is one doc/architecture.md allows, '
              'and only the files it lists write scheduling')
    return 1 if sccs or fails else 0


if __name__ == '__main__':
    sys.exit(main())
