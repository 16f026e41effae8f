"""The wmma_gemm op: directive, schedule, kernel builder, signature, build path and API."""
from .api import default_schedule, fit_schedule, gemm, run_gemm  # noqa: F401
