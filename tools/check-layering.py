#!/usr/bin/env python3
"""Checks the tree's imports against its layers (tools/layers.txt).

Reads every C++ and CUDA source under the modules' folders, takes each quoted include that
names a project path ("runtime/comm/job.hpp"), and fails, naming the file and line, on:
  - an include from one module into another that layers.txt does not allow (an upward or
    sideways import);
  - an include of another module's internals (a path under a `detail/` folder outside the
    folder that owns it);
  - a source folder that layers.txt does not place, and an allowed graph with a cycle.
Tests (tests/) may include anything. Exit status 0 when the tree keeps its layers, 1 when it
does not, 2 when layers.txt itself is malformed.

Usage: tools/check-layering.py [--root DIR] [--layers FILE]
"""
import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".hpp", ".cpp", ".h", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SPLIT_FOLDERS = ("runtime", "tools")  # modules are one level down in these


def die(message):
    print(f"check-layering: {message}", file=sys.stderr)
    sys.exit(2)


def read_layers(path):
    allowed = {}
    if not os.path.isfile(path):
        die(f"no layers file {path}")
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                die(f"{path}:{number}: expected 'module: modules it may include', got '{line}'")
            module, _, rest = line.partition(":")
            module = module.strip()
            if module in allowed:
                die(f"{path}:{number}: module '{module}' listed twice")
            allowed[module] = set(rest.split())
    for module, targets in allowed.items():
        for target in targets:
            if target not in allowed:
                die(f"{path}: '{module}' may include '{target}', which is not a module of the file")
    return allowed


def find_cycle(allowed):
    state = {}

    def visit(module, trail):
        state[module] = "open"
        for target in sorted(allowed[module]):
            if state.get(target) == "open":
                return trail + [module, target]
            if target not in state:
                cycle = visit(target, trail + [module])
                if cycle:
                    return cycle
        state[module] = "done"
        return None

    for module in sorted(allowed):
        if module not in state:
            cycle = visit(module, [])
            if cycle:
                return cycle
    return None


def module_of(path, top_folders):
    """The module of a repository path ('runtime/comm/job.hpp' -> 'runtime/comm'), or None."""
    parts = path.split("/")
    if parts[0] not in top_folders:
        return None
    if parts[0] in SPLIT_FOLDERS:
        return "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    return parts[0]


def owner_of_detail(path):
    """'runtime/executor/detail/ring_pass.hpp' -> 'runtime/executor/'; None outside detail/."""
    parts = path.split("/")
    if "detail" not in parts[:-1]:
        return None
    return "/".join(parts[: parts.index("detail")]) + "/"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--layers", default=None, help="default: ROOT/tools/layers.txt")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    layers = args.layers or os.path.join(root, "tools", "layers.txt")
    allowed = read_layers(layers)
    cycle = find_cycle(allowed)
    if cycle:
        print(f"{layers}: the allowed imports form a cycle: {' -> '.join(cycle)}")
        return 1
    top_folders = {m.split("/")[0] for m in allowed}

    problems = []
    files = 0
    for top in sorted(top_folders):
        for folder, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(names):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                module = module_of(rel, top_folders)
                if module not in allowed:
                    problems.append(f"{rel}: folder '{module}' has no place in {os.path.relpath(layers, root)}")
                    continue
                files += 1
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target_path = match.group(1)
                        target = module_of(target_path, top_folders)
                        if target is None:
                            continue  # a sibling header ("foo.hpp") or a third-party one
                        owner = owner_of_detail(target_path)
                        if owner is not None and not rel.startswith(owner):
                            problems.append(f"{rel}:{number}: includes {target_path}, internal to {owner}")
                        elif target != module and target not in allowed[module]:
                            problems.append(f"{rel}:{number}: {module} may not include {target} ({target_path}); "
                                            f"{module} may include: {' '.join(sorted(allowed[module])) or 'nothing'}")
    for p in problems:
        print(p)
    if problems:
        print(f"check-layering: {len(problems)} import(s) break the layers of {os.path.relpath(layers, root)}")
        return 1
    print(f"check-layering: {files} files in {len(allowed)} modules keep their layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
