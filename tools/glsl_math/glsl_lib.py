"""Load drivers/glsl/glsl_math/*.glsl and assemble shader source.

The marker format is the driver's contract (see the README there):
    // @function NAME [requires DEP1 DEP2 ...]
Everything from one marker to the next (or end of file) belongs to NAME.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
LIBDIR = os.path.normpath(os.path.join(HERE, "..", "..", "drivers", "glsl", "glsl_math"))
MARKER = re.compile(r"^// @function (\w+)(?: requires((?: \w+)+))?\s*$")


def load(libdir=LIBDIR):
    """Return {name: (deps, text)} for every @function in libdir/*.glsl."""
    funcs = {}
    for fn in sorted(os.listdir(libdir)):
        if not fn.endswith(".glsl"):
            continue
        cur = None
        with open(os.path.join(libdir, fn)) as f:
            for line in f:
                m = MARKER.match(line)
                if m:
                    name = m.group(1)
                    if name in funcs:
                        raise ValueError(f"duplicate @function {name} in {fn}")
                    deps = m.group(2).split() if m.group(2) else []
                    funcs[name] = (deps, [line])
                    cur = name
                elif cur is not None:
                    funcs[cur][1].append(line)
    out = {}
    for name, (deps, lines) in funcs.items():
        for d in deps:
            if d not in funcs:
                raise ValueError(f"{name} requires unknown {d}")
        out[name] = (deps, "".join(lines))
    return out


def assemble(names, funcs=None):
    """Source for `names` plus their dependencies, dependencies first."""
    funcs = funcs or load()
    order, state = [], {}

    def visit(n):
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            raise ValueError(f"dependency cycle at {n}")
        state[n] = 1
        for d in funcs[n][0]:
            visit(d)
        state[n] = 2
        order.append(n)

    for n in names:
        visit(n)
    return "".join(funcs[n][1] for n in order)


def check_requires(funcs=None):
    """Every gp_/gp__ identifier used in a function body must be itself or
    listed (directly) in its requires line.  Returns a list of problems."""
    funcs = funcs or load()
    problems = []
    ident = re.compile(r"\b(gp_\w+)\s*\(")
    for name, (deps, text) in funcs.items():
        body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))
        used = set(ident.findall(body)) - {name}
        missing = sorted(u for u in used if u not in deps)
        extra = sorted(d for d in deps if d not in used)
        if missing:
            problems.append(f"{name}: uses but does not require {missing}")
        if extra:
            problems.append(f"{name}: requires but does not use {extra}")
    return problems
