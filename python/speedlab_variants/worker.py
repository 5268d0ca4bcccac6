"""The Python side of speedlab's bridge (docs/python-variants.md, "Protocol").

    python -m speedlab_variants.worker list [FILE.py ...]    JSON list of the variants
    python -m speedlab_variants.worker serve FILE.py ...     runs one variant, driven by speedlab

serve: requests arrive one JSON object per line on stdin; each gets one JSON line on fd 3.
stdout and stderr belong to the variant (speedlab keeps their tail for failure messages).
Arrays live in a shared memory file speedlab passes as an inherited file descriptor.
"""

import importlib
import importlib.util
import json
import mmap
import os
import pkgutil
import sys
import time
import traceback
import types

from speedlab_variants import registry

REPLY_FD = 3


def load_variants(files):
    """Imports the lessons shipped here and the user's files; returns the import errors."""
    errors = []
    import speedlab_variants.lessons as lessons
    for mod in sorted(m.name for m in pkgutil.iter_modules(lessons.__path__)):
        try:
            importlib.import_module(f"speedlab_variants.lessons.{mod}")
        except Exception as e:  # one broken lesson module must not hide the others
            errors.append(f"speedlab_variants.lessons.{mod}: {type(e).__name__}: {e}")
    for i, path in enumerate(files):
        try:
            spec = importlib.util.spec_from_file_location(f"speedlab_user_variants_{i}", path)
            if spec is None:
                raise ImportError("not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        except Exception as e:
            errors.append(f"{path}: {type(e).__name__}: {e}")
    return errors


def interpreter():
    return f"{sys.executable} (Python {sys.version.split()[0]})"


def missing_packages(info):
    return [p for p in info.requires if importlib.util.find_spec(p) is None]


def command_list(files):
    errors = load_variants(files)
    out = {"interpreter": interpreter(), "executable": os.path.realpath(sys.executable), "errors": errors,
           "variants": []}
    for (workload, name), info in sorted(registry.items()):
        out["variants"].append({
            "workload": workload, "name": name, "kind": info.kind, "description": info.description,
            "requires": list(info.requires), "missing": missing_packages(info),
            "expected_invalid": info.expected_invalid, "module": info.module})
    print(json.dumps(out))
    return 0


def skip_reason(info, params):
    missing = missing_packages(info)
    if missing:
        return (f"needs the Python package{'s' if len(missing) > 1 else ''} {', '.join(missing)}, "
                f"which {interpreter()} cannot import")
    for name, limit in info.max_size.items():
        if name in params and params[name] > limit:
            return f"a {info.description or info.name} runs only up to {name} = {limit} (this point: {params[name]})"
    if info.kind == "cuda":
        try:
            if "cupy" in info.requires:
                import cupy
                if cupy.cuda.runtime.getDeviceCount() < 1:
                    return "no CUDA device"
            else:
                from speedlab_variants.compat import import_numba_cuda
                _, cuda = import_numba_cuda()
                if not cuda.is_available():
                    return "numba.cuda finds no CUDA device"
        except Exception as e:
            return f"no CUDA device ({type(e).__name__}: {e})"
    return None


def map_arrays(request):
    import numpy as np
    fd, size = request["shm_fd"], request["shm_bytes"]
    buf = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) if size else b""
    inputs, outputs = {}, {}
    for a in request["arrays"]:
        count = 1
        for d in a["shape"]:
            count *= d
        view = np.frombuffer(buf, dtype=a["dtype"], count=count, offset=a["offset"]).reshape(a["shape"])
        if a["output"]:
            outputs[a["name"]] = view
        else:
            view.flags.writeable = False  # a variant reads its inputs; it cannot change the check
            inputs[a["name"]] = view
    return buf, inputs, outputs


def to_host(value):
    import numpy as np
    if hasattr(value, "copy_to_host"):  # numba device array
        return value.copy_to_host()
    if type(value).__module__.split(".")[0] == "cupy":
        return value.get()
    return np.asarray(value)


def store_result(value, outputs):
    """Copies what result() returned into the shared output arrays (untimed, before the check)."""
    import numpy as np
    if value is None:
        return
    names = list(outputs)
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (tuple, list)) and len(names) > 1:
        items = zip(names, value)
    else:
        if len(names) != 1:
            raise TypeError(f"result() returned one value; the workload has outputs {names}: return a dict")
        items = [(names[0], value)]
    for name, v in items:
        if name not in outputs:
            raise KeyError(f"result() returned {name!r}; the outputs are {names}")
        out = outputs[name]
        host = to_host(v)
        if host.size != out.size:
            raise ValueError(f"result {name!r} has {host.size} elements; the workload expects {out.size} {out.shape}")
        if not np.shares_memory(host, out):
            np.copyto(out, host.reshape(out.shape), casting="unsafe")


def flush_injected_records():
    """Has the injection library of `speedlab profile` write what CUPTI recorded so far.

    speedlab sets CUDA_INJECTION64_PATH under its cupti profiler; CUDA loaded the library when
    the variant first used it. False when it did not (no CUDA work here, or no profiler)."""
    path = os.environ.get("CUDA_INJECTION64_PATH")
    if not path:
        return False
    import ctypes
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_NOW)  # only if CUDA loaded it already
    except OSError:
        return False
    return bool(lib.speedlab_inject_flush())


def where(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}"


def command_serve(files):
    reply_file = os.fdopen(REPLY_FD, "w", buffering=1)
    requests = sys.stdin

    def reply(obj):
        reply_file.write(json.dumps(obj) + "\n")
        reply_file.flush()

    run, outputs, keep = None, {}, None
    for line in requests:
        req = json.loads(line)
        op = req["op"]
        if op == "quit":
            reply({"ok": True})
            return 0
        try:
            if op == "open":
                errors = load_variants(files)
                info = registry.get((req["workload"], req["variant"]))
                if info is None:
                    detail = f" (import errors: {'; '.join(errors)})" if errors else ""
                    raise LookupError(f"no Python variant {req['variant']!r} of workload {req['workload']!r}{detail}")
                why = skip_reason(info, req["params"])
                if why:
                    reply({"ok": False, "skip": why})
                    continue
                keep, inputs, outputs = map_arrays(req)
                run = info.factory()
                run.params = dict(req["params"])
                run.inputs = types.SimpleNamespace(**inputs)
                run.outputs = types.SimpleNamespace(**outputs)
                run.threads = req["threads"]
                reply({"ok": True, "phases": info.phases(), "interpreter": interpreter()})
                continue
            if run is None:
                raise RuntimeError(f"'{op}' before 'open'")
            fn = getattr(run, op) if op in ("setup", "transfer_in", "compute", "transfer_out", "teardown") else None
            if op == "flush":
                reply({"ok": True, "flushed": flush_injected_records()})
                continue
            if op == "result":
                store_result(run.result(), vars(run.outputs))
                reply({"ok": True})
                continue
            if fn is None:
                raise ValueError(f"unknown request {op!r}")
            cpu0, t0 = time.process_time_ns(), time.perf_counter_ns()
            fn()
            t1, cpu1 = time.perf_counter_ns(), time.process_time_ns()
            reply({"ok": True, "ns": t1 - t0, "cpu_ns": cpu1 - cpu0})
        except Exception as e:
            traceback.print_exc()  # the whole traceback goes to the log speedlab keeps
            reply({"ok": False, "error": f"{type(e).__name__}: {e}", "where": where(e)})
    return 0


def main(argv):
    if len(argv) >= 1 and argv[0] == "list":
        return command_list(argv[1:])
    if len(argv) >= 1 and argv[0] == "serve":
        return command_serve(argv[1:])
    print("usage: python -m speedlab_variants.worker list|serve [FILE.py ...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
