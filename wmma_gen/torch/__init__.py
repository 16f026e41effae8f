"""wmma_gen.torch: the generated kernels on PyTorch tensors (pip install 'wmma-gen[torch]').

    flash_attn_func, flash_attn_varlen_func      flash-attn 2's calls (bshd, bottom-right causal)
    flash_attn_func(q8, k8, v8, q_descale=...)   FlashAttention-3's fp8 forward (gfx12, O bf16)
    flash_attn_with_kvcache                      flash-attn's paged / in-place-append decode call
    flash_mla_with_kvcache                       FlashMLA's MLA decode on a paged latent cache (docs/mla.md)
    scaled_dot_product_attention                 SDPA's call (bhsd, top-left is_causal)
    wmma_gen.torch.sdpa.enable() / enabled()     wmma_gen under F.scaled_dot_product_attention (docs/integrations.md)
    linear, matmul                               F.linear (+ fused bias/activation), a @ b
    warmup(model, example_inputs) | warmup([problem, ...])   compile before step 1
    record_problems()                            the problems a block issues -> `wmma-gen sweep --problems`
    launch_stream(handle)                        stream for CPU tensors routed to a HIP device
    ScratchPool, scratch_pool(pool)              scratch that outlives a captured graph (docs/pytorch.md)

Each op is a torch.library custom op (torch.ops.wmma_gen.attention / attention_backward / gemm;
paged_attention / paged_varlen, inference only) with a fake (meta) implementation and an
autograd formula where it trains, so autograd and
torch.compile(fullgraph=True) see one opaque op. Tensors on an AMD GPU (ROCm torch, device
"cuda") run there on torch.cuda.current_stream(); CPU tensors run on the emulator (exact,
slow). Nothing is copied to the host. `import wmma_gen` never imports this package (or torch).
"""
from .flash import flash_attn_func, flash_attn_varlen_func, scaled_dot_product_attention
from .kvcache import flash_attn_with_kvcache
from .linear import linear, matmul
from .mla import flash_mla_with_kvcache
from .record import record_problems
from .runtime import ScratchPool, launch_stream, scratch_pool
from .warmup import warmup

__all__ = ["flash_attn_func", "flash_attn_varlen_func", "flash_attn_with_kvcache", "flash_mla_with_kvcache",
           "scaled_dot_product_attention",
           "linear", "matmul", "warmup", "launch_stream", "record_problems", "ScratchPool", "scratch_pool"]
