#!/usr/bin/env python3
"""Static checks of drivers/glsl/glsl_math:
  1. every @function's `requires` list names exactly the gp_ functions it calls;
  2. every `const float` and the 2/pi table in the GLSL files equal what
     fit_coefficients.py prints (so the constants are reproducible);
  3. every public gp_* function, assembled with its dependencies only, compiles
     as a GLSL 4.50 compute shader with glslangValidator (if installed:
     Debian package glslang-tools) and with the local OpenGL driver (moderngl,
     EGL).  glslang's warning about reserved "__" identifiers (the gp__ helper
     prefix) is reported once, not as a failure.

Usage:  python3 tools/glsl_math/check_sources.py
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import glsl_lib


def shader(name, funcs):
    sig = re.search(r"float %s\(([^)]*)\)" % name, funcs[name][1]).group(1)
    nargs = len(sig.split(","))
    return ("#version 450\nlayout(local_size_x = 64) in;\n"
            "layout(std430, binding = 0) buffer A { float a[]; };\n" +
            glsl_lib.assemble([name], funcs) +
            "void main() {\n  uint i = gl_GlobalInvocationID.x;\n"
            "  a[i] = %s(%s);\n}\n" % (name, ", ".join("a[i + %du]" % k for k in range(nargs))))


def check_constants():
    """Compare the GLSL constants with fit_coefficients.py's output."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "fit_coefficients.py")],
                         capture_output=True, text=True, check=True).stdout
    fit = {m.group(1): float(m.group(2))
           for m in re.finditer(r"const float (\w+) = ([^;]+);", out)}
    table = re.search(r"uint\[8\]\(([^)]*)\)", out).group(1).replace(" ", "")
    problems = []
    for fn in sorted(os.listdir(glsl_lib.LIBDIR)):
        if not fn.endswith(".glsl"):
            continue
        text = open(os.path.join(glsl_lib.LIBDIR, fn)).read()
        for m in re.finditer(r"const float (\w+) = ([^;]+);", text):
            name, v = m.group(1), float(m.group(2))
            if fit.get(name) != v:
                problems.append(f"{fn}: {name} = {v} but fit_coefficients.py gives {fit.get(name)}")
        if "TWO_OVER_PI_BITS" in text and table not in re.sub(r"\s", "", text):
            problems.append(f"{fn}: TWO_OVER_PI_BITS differs from fit_coefficients.py")
    return problems


def main():
    funcs = glsl_lib.load()
    problems = glsl_lib.check_requires(funcs)
    problems += check_constants()
    public = [n for n in funcs if n.startswith("gp_") and not n.startswith("gp__")]
    glslang = shutil.which("glslangValidator")
    reserved_warned = False
    try:
        import moderngl
        ctx = moderngl.create_standalone_context(backend="egl", require=450)
    except Exception as e:      # no EGL here: glslang only
        print("no OpenGL context:", e)
        ctx = None
    with tempfile.TemporaryDirectory() as d:
        for n in public:
            src = shader(n, funcs)
            if glslang:
                path = os.path.join(d, n + ".comp")
                with open(path, "w") as f:
                    f.write(src)
                r = subprocess.run([glslang, "-S", "comp", path], capture_output=True, text=True)
                lines = [l for l in r.stdout.splitlines() if l.strip() and l.strip() != path]
                other = [l for l in lines if "consecutive underscores" not in l]
                reserved_warned |= len(other) < len(lines)
                if r.returncode != 0 or other:
                    problems.append(f"{n}: glslang: " + " | ".join(other[:5]))
            if ctx is not None:
                try:
                    ctx.compute_shader(src)
                except Exception as e:
                    problems.append(f"{n}: OpenGL driver: {str(e)[:500]}")
    print(f"{len(funcs)} @function entries, {len(public)} public")
    if not glslang:
        print("glslangValidator not found: skipped (apt-get install glslang-tools)")
    if reserved_warned:
        print("note: glslang warns that identifiers with '__' (gp__*) are reserved")
    for p in problems:
        print("PROBLEM:", p)
    print("OK" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
