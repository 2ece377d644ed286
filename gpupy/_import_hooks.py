"""Running gpupy's code for another library when that library is imported.

gpupy teaches a few libraries about its arrays (pandas' groupby keys, Dask's
chunk types), but `import gpupy` must not import them: most programs use
neither, and each costs a large import. `after_import(name, hook)` runs
hook(module) at once if the module is already imported, else right after
the module's own code has run, from a finder that finds nothing itself and
only wraps the regular finders' loader. Base layer: imports nothing of gpupy.
"""

import importlib.abc
import importlib.machinery
import sys


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.waiting = {}  # module name -> hooks still to run

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.waiting:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            for hook in self.waiting.pop(fullname, ()):
                hook(module)

        spec.loader.exec_module = exec_module  # this module's own loader object
        return spec


_finder = _AfterImportFinder()


def after_import(name, hook):
    """Runs hook(module) once the module `name` is imported (now if it is)."""
    module = sys.modules.get(name)
    if module is not None:
        hook(module)
        return
    _finder.waiting.setdefault(name, []).append(hook)
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
