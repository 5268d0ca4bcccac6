"""NVTX ranges for the ground-truth programs: the `nvtx` package where installed, else
CuPy's or PyTorch's own NVTX calls (the GPU machine's Python has those, not always `nvtx`)."""
try:
    import nvtx

    push, pop = nvtx.push_range, nvtx.pop_range
except ImportError:
    try:
        from cupy.cuda import nvtx as _cupy_nvtx

        push, pop = _cupy_nvtx.RangePush, _cupy_nvtx.RangePop
    except ImportError:
        import torch

        push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
