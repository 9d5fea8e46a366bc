#!/usr/bin/env python3
# tests/include-cycles.py [SRCDIR]: fail on any include cycle between modules
# of src/ (issue 17). A module is a .c/.h pair, named by its path without
# the extension (daemon/core/registry); a private header is part of its
# module: X_int.h of X, and internal.h of the module whose header of the
# same directory it includes (lib/internal.h of lib/rtsched). Includes are
# rooted at src/ ("daemon/core/registry.h") or, failing that, relative to
# the including file. Prints every strongly connected component of more
# than one module, then exits 1 if there is any, else 0.
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_root():
    if len(sys.argv) > 1:
        return sys.argv[1]
    top = os.environ.get('top_srcdir') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    return os.path.join(top, 'src')


def resolve(root, here, inc):
    """The header's path below root, without .h, or None if it is not ours."""
    for cand in (inc, os.path.join(here, inc)):
        path = os.path.normpath(os.path.join(root, cand))
        if os.path.isfile(path):
            return os.path.relpath(path, root)[:-2]
    return None


def main():
    root = source_root()
    edges = {}
    for dirpath, _, files in os.walk(root):
        here = os.path.relpath(dirpath, root)
        for f in files:
            if not f.endswith(('.c', '.h')):
                continue
            node = os.path.normpath(os.path.join(here, f))[:-2]
            with open(os.path.join(dirpath, f), encoding='utf-8', errors='replace') as fh:
                incs = INCLUDE.findall(fh.read())
            edges.setdefault(node, set())
            for inc in incs:
                if inc.endswith('.h'):
                    t = resolve(root, here, inc)
                    if t is not None:
                        edges[node].add(t)
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
    return 1 if sccs else 0


if __name__ == '__main__':
    sys.exit(main())
