#!/usr/bin/python3
"""Lists the modules of ui/'s folders (a .h and its .cpp) that include each other, directly (pairs)
or round a longer loop; exits 1 when there are any. Usage: include_cycles.py [ui folder]."""
import collections
import pathlib
import re
import sys

folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2] / "ui")
includes = collections.defaultdict(set)  # module -> the ui/ modules its .h and .cpp include
for path in sorted(folder.rglob("*")):
    if path.suffix in (".h", ".cpp"):
        module = path.relative_to(folder).with_suffix("").as_posix()  # e.g. frame/main_window
        for name in re.findall(r'^#include "ui/([\w/]+)\.h"', path.read_text(), re.M):
            if name != module:
                includes[module].add(name)

pairs = sorted({tuple(sorted((a, b))) for a in includes for b in includes[a] if a in includes.get(b, ())})
for a, b in pairs:
    print(f"pair: {a} <-> {b}")

# Longer loops: the strongly connected components (Tarjan) of more than one module that are not
# just one of the pairs above.
index, low, stack, on_stack, loops = {}, {}, [], set(), []

def visit(module):
    index[module] = low[module] = len(index)
    stack.append(module)
    on_stack.add(module)
    for other in includes.get(module, ()):
        if other not in index:
            visit(other)
            low[module] = min(low[module], low[other])
        elif other in on_stack:
            low[module] = min(low[module], index[other])
    if low[module] == index[module]:
        component = []
        while True:
            other = stack.pop()
            on_stack.discard(other)
            component.append(other)
            if other == module:
                break
        if len(component) > 2 or (len(component) == 2 and tuple(sorted(component)) not in pairs):
            loops.append(sorted(component))

sys.setrecursionlimit(10000)
for module in sorted(includes):
    if module not in index:
        visit(module)
for loop in loops:
    print("loop: " + " -> ".join(loop))
print(f"{len(pairs)} pairs, {len(loops)} longer loops")
sys.exit(1 if pairs or loops else 0)
