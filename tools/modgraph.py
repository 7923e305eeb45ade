#!/usr/bin/env python3
"""Print git-rutter's module graph from the code: which top-level module of src/ names which.

    tools/modgraph.py            edges, then the layers from the bottom, then any cycle
    tools/modgraph.py --dot      the graph in Graphviz's dot language

An edge A -> B(n) means n lines of src/A outside its tests name `crate::B` (a `use crate::{..}`
group counts once per name). Test code (after a file's first `#[cfg(test)]`) is left out: tests
may reach anything. tests/architecture.rs checks the same graph against the order in src/lib.rs.
"""
import os
import re
import sys
from collections import defaultdict

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def top_module(rel):
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def code_of(text):
    return text.split("#[cfg(test)]")[0]


def names(line):
    """The top-level modules a line names through `crate::`."""
    found = re.findall(r"crate::([a-z_][a-z0-9_]*)", line)
    for group in re.findall(r"crate::\{([^}]*)\}", line):
        found += re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group)
    return found


def graph():
    modules = set()
    edges = defaultdict(lambda: defaultdict(int))
    for root, _, files in os.walk(SRC):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), SRC)
            if rel in ("lib.rs", "main.rs"):
                continue
            here = top_module(rel)
            modules.add(here)
            with open(os.path.join(root, f), encoding="utf-8") as fh:
                code = code_of(fh.read())
            # a `use crate::{a, b::c}` group may span lines: join it first
            code = re.sub(r"\{[^{}]*\}", lambda m: m.group(0).replace("\n", " "), code)
            for line in code.splitlines():
                if line.lstrip().startswith("//"):
                    continue
                for name in set(names(line)):
                    if name != here:
                        edges[here][name] += 1
    return modules, edges


def layers(modules, edges):
    """Longest-path layering from the bottom; what is left over sits on a cycle."""
    level, left = {}, set(modules)
    while left:
        ready = [m for m in left if all(d in level for d in edges[m] if d in modules)]
        if not ready:
            return level, left
        for m in ready:
            level[m] = 1 + max((level[d] for d in edges[m] if d in level), default=0)
        left -= set(ready)
    return level, set()


def main():
    modules, edges = graph()
    if "--dot" in sys.argv:
        print("digraph rutter {\n  rankdir=BT;")
        for m in sorted(modules):
            for d, n in sorted(edges[m].items()):
                print(f'  "{m}" -> "{d}" [label={n}];')
        print("}")
        return 0
    width = max(len(m) for m in modules)
    for m in sorted(modules, key=lambda m: (-sum(edges[m].values()), m)):
        out = " ".join(f"{d}({n})" for d, n in sorted(edges[m].items(), key=lambda x: (-x[1], x[0])))
        print(f"{m:<{width}} -> {out}")
    level, cycle = layers(modules, edges)
    print("\nlayers, from the bottom:")
    for n in sorted(set(level.values())):
        print(f"  {n}. " + ", ".join(sorted(m for m in level if level[m] == n)))
    if cycle:
        print("\ncycle among: " + ", ".join(sorted(cycle)))
        return 1
    print("\nno cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
