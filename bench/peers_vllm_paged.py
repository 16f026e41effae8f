"""vLLM's Triton unified-attention kernel (`kernel_unified_attention`, the split-KV "3D" decode path),
compiled offline for an AMD target: its main loop's instructions per key beside ours
(bench/paged_attention_table.py). vLLM's code is never copied into this repository: it is read at
bench time from a vLLM wheel or sdist the user downloaded (`pip download vllm --no-deps
--only-binary :all:`), named by WMMA_GEN_VLLM_DIST (the .whl / .tar.gz, or an unpacked tree holding
vllm/v1/attention/ops/). Without it, `load()` returns None and the table says so.

Only the kernel's two source files are loaded (triton_unified_attention.py and
triton_attention_helpers.py); the rest of the vllm package they import (envs, logger, platforms,
triton_utils, kv_cache_interface) is replaced by the few names they use, with the values the
ROCm build has (fp8 = torch.float8_e4m3fn, batch invariance off). The launch follows vLLM's own
`unified_attention()` for a decode step: BLOCK_M 16 packed rows (GQA group <= 16), TILE_SIZE 16
for 16-bit queries, 3D grid with NUM_SEGMENTS_PER_SEQ 16, per-tensor fp8 scales (KV_QUANT_MODE 1)
or none, causal, Triton's default num_warps / num_stages (none passed). Needs torch and triton.
"""
from __future__ import annotations

import enum
import importlib.util
import logging
import os
import sys
import tarfile
import tempfile
import types
import zipfile
from pathlib import Path

OPS = "vllm/v1/attention/ops/"
FILES = ("triton_unified_attention.py", "triton_attention_helpers.py")
ENV = "WMMA_GEN_VLLM_DIST"
KERNEL = "kernel_unified_attention"
TILE_SIZE = 16     # keys per loop trip: vLLM's _get_tile_size for a decode with 16-bit queries


def _extract(dist: Path, out: Path) -> Path:
    """The two source files of `dist` (wheel, sdist or tree) under out/vllm/v1/attention/ops/."""
    dest = out / OPS
    dest.mkdir(parents=True, exist_ok=True)
    if dist.is_dir():
        for f in FILES:
            (dest / f).write_bytes((dist / OPS / f).read_bytes())
        return dest
    if dist.suffix == ".whl":
        with zipfile.ZipFile(dist) as z:
            for f in FILES:
                (dest / f).write_bytes(z.read(OPS + f))
        return dest
    with tarfile.open(dist) as t:            # sdist: <name>-<version>/vllm/...
        for m in t.getmembers():
            for f in FILES:
                if m.name.endswith("/" + OPS + f):
                    (dest / f).write_bytes(t.extractfile(m).read())
    return dest


def _stub_vllm(ops_dir: Path) -> None:
    """sys.modules entries for the vllm names the two files import (module doc)."""
    import torch
    import triton
    import triton.language as tl

    def mod(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    class KVQuantMode(enum.IntEnum):      # vllm/v1/kv_cache_interface.py's values
        NONE = 0
        FP8_PER_TENSOR = 1
        INT8_PER_TOKEN_HEAD = 2
        FP8_PER_TOKEN_HEAD = 3
        INT4_PER_TOKEN_HEAD = 4
        NVFP4 = 5

    platform = types.SimpleNamespace(fp8_dtype=lambda: torch.float8_e4m3fn,
                                     is_device_capability_family=lambda *a: False)
    mod("vllm", __path__=[])
    mod("vllm.envs", VLLM_BATCH_INVARIANT=False)
    mod("vllm.logger", init_logger=logging.getLogger)
    mod("vllm.platforms", current_platform=platform)
    mod("vllm.triton_utils", tl=tl, triton=triton)
    mod("vllm.v1", __path__=[])
    mod("vllm.v1.attention", __path__=[])
    mod("vllm.v1.attention.ops", __path__=[str(ops_dir)])
    mod("vllm.v1.kv_cache_interface", KVQuantMode=KVQuantMode)


def load(dist: str | None = None):
    """vLLM's kernel_unified_attention (a triton JITFunction), or None when no vLLM distribution is
    named (argument or WMMA_GEN_VLLM_DIST) or it lacks the kernel's files."""
    dist = dist or os.environ.get(ENV)
    if not dist or not Path(dist).exists():
        return None
    out = Path(tempfile.mkdtemp(prefix="wmma_gen_vllm_"))
    try:
        ops_dir = _extract(Path(dist), out)
    except (KeyError, FileNotFoundError, OSError, tarfile.TarError, zipfile.BadZipFile):
        return None
    if not all((ops_dir / f).exists() for f in FILES):
        return None
    saved = {k: v for k, v in sys.modules.items() if k == "vllm" or k.startswith("vllm.")}
    try:      # the stubs live only while the two files import: a real vllm in this process is untouched
        _stub_vllm(ops_dir)
        name = "vllm.v1.attention.ops.triton_unified_attention"
        spec = importlib.util.spec_from_file_location(name, ops_dir / FILES[0])
        m = importlib.util.module_from_spec(spec)
        sys.modules[name] = m
        spec.loader.exec_module(m)
    finally:
        for k in [k for k in sys.modules if k == "vllm" or k.startswith("vllm.")]:
            del sys.modules[k]
        sys.modules.update(saved)
    return getattr(m, KERNEL, None)


_PTR = {"f16": "*fp16", "bf16": "*bf16", "fp8e4m3": "*fp8e4nv", "fp8e5m2": "*fp8e5"}


def compile_decode(kernel, arch: str, kv: str, *, heads: int = 32, kv_heads: int = 8, head_dim: int = 128,
                   block_size: int = 16, segments: int = 16, q_dtype: str = "f16"):
    """The CompiledKernel of vLLM's decode launch (module doc) for `arch` with a `kv` cache
    ("f16", "bf16", "fp8e4m3" or "fp8e5m2") and `q_dtype` queries."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import triton

    if kv not in _PTR or q_dtype not in ("f16", "bf16"):
        raise ValueError(f"kv={kv!r}, q_dtype={q_dtype!r}: kv one of {', '.join(_PTR)}, q_dtype f16 or bf16")
    group = heads // kv_heads
    block_m = 16 if group <= 16 else triton.next_power_of_2(group)
    fp8 = kv.startswith("fp8")
    qt, kt = _PTR[q_dtype], _PTR[kv]
    ptr = {"query_ptr": qt, "output_ptr": qt, "key_cache_ptr": kt, "value_cache_ptr": kt,
           "block_tables_ptr": "*i32", "seq_lens_ptr": "*i32", "query_start_len_ptr": "*i32",
           "rswa_prefix_lens_ptr": "*i32", "segm_output_ptr": "*fp32", "segm_max_ptr": "*fp32",
           "segm_expsum_ptr": "*fp32", "k_scale": "*fp32", "v_scale": "*fp32"}
    scalars = {"scale": "fp32", "out_scale": "fp32", "softcap": "fp32", "num_seqs": "i32"}
    const = dict(num_query_heads=heads, num_queries_per_kv=group, BLOCK_SIZE=block_size, TILE_SIZE=TILE_SIZE,
                 HEAD_SIZE=head_dim, HEAD_SIZE_PADDED=triton.next_power_of_2(head_dim), USE_ALIBI_SLOPES=False,
                 USE_ALIBI_SQRT=False, USE_QQ_BIAS=False, USE_SOFTCAP=False, USE_SINKS=False, SLIDING_WINDOW=0,
                 USE_CAUSAL=True, USE_PER_SEQ_CAUSAL=False, USE_MM_PREFIX=False, MAX_MM_RANGES=0, R_SWA_WINDOW=0,
                 USE_R_SWA=False, stride_k_cache_3=1, stride_v_cache_3=1, BLOCK_Q=block_m // group,
                 BLOCK_M=block_m, NUM_SEGMENTS_PER_SEQ=segments, USE_FP8=False, IS_3D=True,
                 KV_QUANT_MODE=1 if fp8 else 0, Q_IS_FP8=False, CHUNK_LOOKBACK=-1, CHUNK_SIZE=-1, USE_TD=False,
                 USE_TD_QO=False, MM_PREFIX_CLAMP_SW=False)
    sig, cx, attrs = {}, {}, {}
    for i, p in enumerate(kernel.params):
        n = p.name
        if n in const or p.is_constexpr:
            sig[n] = "constexpr"
            cx[n] = const.get(n, p.default)
        elif n in ptr:
            sig[n] = ptr[n]
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif n in scalars:
            sig[n] = scalars[n]
        elif n.endswith("_ptr") or n.startswith("stride_ks") or n.startswith("stride_vs") or n == "q_scale":
            sig[n] = "constexpr"          # passed as None by vLLM's decode launch: dead branches
            cx[n] = None
        else:                             # the int64 strides
            sig[n] = "i64"
            if n.startswith("stride") or n.endswith("stride_0") or n.endswith("stride_1") or n == "block_table_stride":
                attrs[(i,)] = [["tt.divisibility", 16]]
    src = ASTSource(kernel, sig, constexprs=cx, attrs=attrs)
    return triton.compile(src, target=GPUTarget("hip", arch, 32))
