"""speedlab's Python variants: a workload's variant written in Python.

speedlab runs it in a Python process of the user's choosing, hands it the workload's inputs
as NumPy arrays (mapped from memory speedlab filled, not copied), times each phase it asks
for, and checks the result with the workload's own C++ validation.

A variant is a class with the phases of speedlab::variant_run:

    from speedlab_variants import Variant, variant

    @variant("vector", "numpy", description="c = a * b in NumPy")
    class VectorNumpy(Variant):
        def compute(self):
            self.c = self.inputs.a * self.inputs.b      # as the lesson wrote it
        def result(self):
            return self.c                               # checked by the workload, untimed

or one function, called with the inputs and parameters it names; what it returns is the
result:

    @variant("vector", "numpy-fn")
    def vector_numpy(a, b, op):
        return a * b if op == "mul" else a + b

speedlab shows it as variant "py-<name>" of the workload. Phases, in order: setup, then per
repetition transfer_in, compute, transfer_out (speedlab times these three), then result
(before validation, untimed), teardown. A phase returns when its work is complete: GPU
variants synchronize before returning.
"""

import inspect
import types

__all__ = ["Variant", "variant", "registry", "VariantInfo"]

KINDS = ("serial", "threads", "cuda")


class Variant:
    """One run of a variant at one parameter point (speedlab::variant_run).

    Attributes set before setup():
      params   dict of the point's parameters, typed (int, float or str)
      inputs   the workload's input arrays by name (read-only NumPy views: inputs.a)
      outputs  the output arrays by name, which result() may also fill in place
      threads  how many host threads a 'threads' variant should use
    """

    def setup(self):
        pass

    def transfer_in(self):
        pass

    def compute(self):
        raise NotImplementedError("a variant must define compute()")

    def transfer_out(self):
        pass

    def result(self):
        """The outputs: one array (a single output), a dict by name or a tuple in order.

        CuPy and Numba device arrays are copied to the host. None: compute() wrote
        self.outputs itself."""
        return None

    def teardown(self):
        pass


class VariantInfo:
    """What @variant registered: shown by `speedlab list`, used by the worker."""

    def __init__(self, workload, name, factory, kind, description, requires, max_size, expected_invalid):
        self.workload = workload
        self.name = name
        self.factory = factory
        self.kind = kind
        self.description = description
        self.requires = tuple(requires)
        self.max_size = dict(max_size or {})
        self.expected_invalid = expected_invalid
        self.module = getattr(factory, "__module__", "")

    def phases(self):
        """The per-repetition phases the variant defines itself (the others cost nothing)."""
        cls = self.factory
        return [p for p in ("transfer_in", "compute", "transfer_out")
                if p == "compute" or getattr(cls, p) is not getattr(Variant, p)]


registry = {}


def _function_variant(fn):
    """Wraps a compute function into a Variant: its arguments are named inputs or params."""
    names = list(inspect.signature(fn).parameters)

    class FunctionVariant(Variant):
        def setup(self):
            pool = dict(self.params)
            pool.update(vars(self.inputs))
            missing = [n for n in names if n not in pool]
            if missing:
                raise TypeError(f"{fn.__name__}() asks for {missing}, which are neither inputs nor parameters "
                                f"(inputs: {sorted(vars(self.inputs))}, parameters: {sorted(self.params)})")
            self._args = {n: pool[n] for n in names}
            self._value = None

        def compute(self):
            self._value = fn(**self._args)

        def result(self):
            return self._value

    FunctionVariant.__name__ = fn.__name__
    FunctionVariant.__module__ = fn.__module__
    return FunctionVariant


def variant(workload, name, kind="serial", description="", requires=(), max_size=None, expected_invalid=False):
    """Registers a Variant subclass (or a compute function) as variant py-<name> of a workload.

    kind: serial, threads or cuda (as the C++ variants). requires: Python packages it
    imports ("numba", "cupy"); where one is missing the point is skipped with the reason.
    max_size: largest parameter values worth running ({"n": 2**20} for a plain loop);
    larger points are skipped. expected_invalid: wrong on purpose (validation must flag it).
    """
    if kind not in KINDS:
        raise ValueError(f"variant kind must be one of {KINDS}, not {kind!r}")

    def register(obj):
        factory = obj
        if isinstance(obj, types.FunctionType):
            factory = _function_variant(obj)
        elif not (isinstance(obj, type) and issubclass(obj, Variant)):
            raise TypeError("@variant decorates a Variant subclass or a function")
        key = (workload, name)
        if key in registry:
            raise ValueError(f"variant {name!r} of workload {workload!r} is registered twice "
                             f"({registry[key].module} and {factory.__module__})")
        needs = tuple(dict.fromkeys(("numpy",) + tuple(requires)))  # every variant gets NumPy arrays
        doc = description or (inspect.getdoc(obj) or "").split("\n")[0]
        registry[key] = VariantInfo(workload, name, factory, kind, doc, needs, max_size, expected_invalid)
        return obj

    return register
