"""``repro capture`` puts this folder first on the program's PYTHONPATH.

It arms the capture hook (nothing more happens until the program imports triton), then
runs the ``sitecustomize`` this one hides, if the interpreter has one, so the program's
own start-up is unchanged. Standard library only.
"""

import importlib.util
import os
import sys


def _chain() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find("sitecustomize", rest) if find is not None else None
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
            return


try:
    import repro_capture_hook

    repro_capture_hook.arm()
except Exception:  # the hook never stops the program, nor prints to its output
    try:
        with open(os.path.join(os.environ["REPRO_CAPTURE_DIR"], "hook-errors.txt"), "a") as log:
            import traceback

            log.write(f"[pid {os.getpid()}] hook not installed\n{traceback.format_exc()}\n")
    except Exception:
        pass
_chain()
