"""The two test tiers (issue 39 item 5): which tests are `slow`, in one table.

`python -m pytest -m "not slow"` is the inner loop (docs/testing.md); the README's command runs every
tier. A test is slow here when it is a heavy compile grid (LLVM code generation of many large kernels)
or a long emulator run; each grid keeps a few representative cases in the fast tier, named by
`fast` below, so every code path a grid covers is still compiled on every inner-loop run (the full
grid then adds the other archs, head dims, dtypes and layouts). The table lives here, not in the test
files, so the files stay as their owners wrote them; tests/conftest.py applies it at collection, and
tests/unit/test_tiers.py checks that every rule still names a collected test and that every test
folder keeps fast tests.

Rules: "folder/file.py::test_name" (a test function, every parametrized case) or "folder/file.py"
(every test in the file) -> `fast`, a predicate on the case's parameters (item.callspec.params) that
is True for the cases kept in the fast tier, or None (every case slow).

GROUPS: files (or tests of a file) that read what earlier tests of the same file recorded (a counter
of cases run, objects seen, a per-process report); under pytest-xdist they run in one worker
(`xdist_group`, named by the file), in file order, and they are in one tier. SHARED_SETUP: files
whose tests share one expensive module-scoped fixture; they run in one worker too, so it is built once.
"""
from __future__ import annotations

from typing import Callable, Optional

import pytest

Fast = Optional[Callable[[dict], bool]]


STASH = pytest.StashKey[dict]()   # what tests/conftest.py saw at collection (tests/unit/test_tiers.py)

GFX11, GFX12 = "gfx1100", "gfx1201"        # one arch per WMMA family (docs/targets.md)


def _one_per_family(p: dict) -> bool:
    return p.get("arch") in (GFX11, GFX12)


SLOW: dict[str, Fast] = {
    # --- heavy compile grids (LLVM code generation of large kernels) ---------------------------
    # every fitted GEMM default at 4096^2 x K: the fast tier compiles the long-loop f16 NN default on
    # both families (the same objects test_gemm_default_density builds: shared through the cache)
    "compile/test_default_spill_grid.py::test_fitted_default_has_no_spills":
        lambda p: _one_per_family(p) and p["dtype"] == "f16" and p["layout"] == "NN" and p["k"] == 4096,
    # attention forward defaults at every head dim: hd128, both mask sets, f16, one arch per family
    "compile/test_attention_compile.py::test_default_schedule_no_spills":
        lambda p: _one_per_family(p) and p["head_dim"] == 128 and p["dtype"] == "f16",
    # attention backward (3 kernels a case), the largest grid: hd128 on one arch per family,
    # and the every-head-dim grid's heaviest variant (all masks) at hd128 on each family
    "compile/test_attention_bwd_quality.py::test_default_schedules_do_not_spill":
        lambda p: _one_per_family(p) and p["d"] == 128,
    "compile/test_attention_bwd_quality.py::test_main_loop_wmma_density_hd128": _one_per_family,
    "compile/test_attention_bwd_quality.py::test_every_head_dim_default_does_not_spill":
        lambda p: (p["arch"], p["d"], p["dtype"], p["masks"]) in {(GFX11, 128, "bf16", True),
                                                                    (GFX12, 128, "f16", True)},
    # per-row codegen-quality bars (density, no spills) of the defaults: the fast tier checks the
    # f16 hd128 rows (attention) and the NN rows (GEMM); the slow tier every row
    "compile/test_gemm_default_density.py::test_default_schedule_density_and_no_spills":
        lambda p: p["layout"] == "NN",
    "compile/test_bwd_default_density.py::test_backward_default_density_and_no_spills":
        lambda p: p["hd"] == 128 and p["dtype"] == "f16",
    "compile/test_fwd_provider_density.py::test_forward_default_density_reaches_mlir_gml":
        lambda p: p["case"][1:3] == ("f16", 128),
    "compile/test_paged_fp8_wmma_compile.py::test_defaults_spill_free": lambda p: p["head_dim"] == 128,
    # the newer chips' defaults: gfx1170 (gfx11-encoded, gfx12 WMMA: the odd one) in the fast tier
    "compile/test_targets_new.py::test_gemm_default_does_not_spill": lambda p: p["arch"] == "gfx1170",
    "compile/test_targets_new.py::test_attention_defaults_do_not_spill":
        lambda p: p["arch"] == "gfx1170" and p["head_dim"] == 128,
    # one fresh interpreter per MLIR provider compiles every parity case (both providers' LLVM
    # codegen of the whole table); .ci/run's second-provider pass compiles tests/compile under
    # mlir-gml anyway. The provider-selection error tests stay fast.
    "compile/test_providers.py::test_provider_compiles_every_case": None,
    "compile/test_providers.py::test_providers_agree": None,
    # one 64x64 GEMM per arch x dtype (3 tests share each object): the fast tier keeps both
    # families and gfx1170 (gfx11-encoded with gfx12 WMMA, docs/targets.md)
    "compile/test_gemm_compile.py::test_compiles_with_expected_wmma":
        lambda p: p["arch"] in (GFX11, "gfx1170", GFX12),
    "compile/test_gemm_compile.py::test_hsaco_is_amdgpu_elf_for_chip":
        lambda p: p["arch"] in (GFX11, "gfx1170", GFX12),
    "compile/test_gemm_compile.py::test_metadata_parses_without_spills":
        lambda p: p["arch"] in (GFX11, "gfx1170", GFX12),
    # shipped entries: every non-paged entry; of the 120 paged ones, hd128 at the L=8192 decode bucket
    "compile/test_shipped_beat_default.py::test_shipped_entry_is_at_least_the_default_under_the_model":
        lambda p: _shipped_fast(p),
    "compile/test_shipped_density.py::test_model_ranked_entry_is_no_looser_than_the_default":
        lambda p: _shipped_fast(p),
    # the backward's SGPR-base addressing: the masked kernels (a superset of the unmasked loads)
    "compile/test_attention_bwd_saddr.py::test_row_reads_use_sgpr_base": lambda p: p["masks"],
    "compile/test_attention_bwd_saddr.py::test_row_vectors_and_outputs_use_sgpr_base": lambda p: p["masks"],
    # --- long emulator runs -------------------------------------------------------------------
    # attention forward masks on the emulator: the mask arithmetic is built the same way for every
    # arch, so the fast tier runs the shapes on gfx1100; gfx1201 keeps its hd128 and strided cases
    "emu/test_attention_fwd_masks.py::test_causal": lambda p: p["arch"] == GFX11,
    "emu/test_attention_fwd_masks.py::test_window": lambda p: p["arch"] == GFX11,
    "emu/test_attention_fwd_masks.py::test_gqa_mqa_layouts": lambda p: p["arch"] == GFX11,
    # the other emulator grids (issue 39 item 5, second pass): masks, varlen, causal alignment and
    # last-tile shifts are host/kernel index arithmetic built the same for every arch, so the fast
    # tier runs those grids on gfx1100 and keeps a case or two of each on gfx1201
    "emu/test_attention_bwd.py::test_causal_bottom_right":
        lambda p: p["arch"] == GFX11 or (p["sq"], p["sk"]) == (70, 33),
    "emu/test_attention_bwd_masks.py::test_window": lambda p: p["arch"] == GFX11,
    "emu/test_attention_bwd_masks.py::test_varlen": lambda p: p["arch"] == GFX11 or p["causal"],
    "emu/test_attention_bwd_masks.py::test_gqa_layouts": lambda p: p["arch"] == GFX11 or p["layout"] == "bhsd",
    "emu/test_attention_fwd_varlen.py::test_varlen": lambda p: p["arch"] == GFX11 or p["causal"] and p["dtype"] == "bf16",
    "emu/test_attention_fwd_pipeline.py::test_last_tile_shift": lambda p: p["arch"] == GFX11,
    "emu/test_attention_fwd_split.py::test_decode_split": lambda p: p["arch"] == GFX11 or p["seq_q"] == 5,
    # gfx1151 has gfx1100's WMMA and VGPR file (docs/targets.md): it keeps its hd128 case (and
    # test_gfx1151_dense); every head dim still runs on gfx1100 and gfx1201
    # (third pass) the original head dims other than 128 once each, alternating the family; hd128
    # on all three archs
    "emu/test_attention_bwd_dims.py::test_head_dims_causal":
        lambda p: p["d"] == 128 or p["arch"] == {32: GFX11, 80: GFX12, 96: GFX11, 256: GFX12}[p["d"]],
    "emu/test_attention_bwd_dims.py::test_f32_outputs": lambda p: p["arch"] != "gfx1151",
    "emu/test_attention_fwd_headdims.py::test_head_dims": lambda p: p["arch"] != "gfx1151",
    # every head dim of 16..256 once, alternating the family (both families meet odd and even
    # fragment counts); the slow tier runs each on both
    "emu/test_attention_headdims_all.py::test_forward":
        lambda p: p["arch"] == (GFX11 if p["head_dim"] // 16 % 2 else GFX12),
    "emu/test_attention_headdims_all.py::test_backward":
        lambda p: p["arch"] == (GFX12 if p["head_dim"] // 16 % 2 else GFX11),
    # GEMM dtype x layout grids: every dtype and layout on the edge-tile shape (gfx11); on gfx12
    # every dtype in NN and every layout in f16 (the 8-bit transposes keep their own emulator test,
    # compile/test_gemm_staging.py); one-tile and multi-workgroup shapes have their own tests
    "emu/test_gemm_emu.py::test_every_gfx11_dtype_shape_layout": lambda p: p["shape"] == (48, 40, 72),
    "emu/test_emu_gfx12_gemm.py::test_gfx1201_every_dtype_and_layout_on_edge_tiles":
        lambda p: p["layout"] == "NN" or p["dtype"] == "f16" and p["acc"] == "f32",
    # paged decode defaults (compile only): the widest head dims, where a spill shows first
    "emu/test_paged_attention_compile.py::test_default_spill_free": lambda p: p["head_dim"] in (128, 256),
    # --- third pass (issue 39 item 5): repeats of a path a fast test already drives ------------
    # torch.compile: aot_eager fullgraph traces the same opaque custom ops and fake impls with no
    # graph break; inductor adds only its own C++ codegen of the torch glue (~16-45 s of C++ builds)
    "torch_lane/test_compile.py::test_compiled_block_inductor_matches_eager": None,
    # the >256 head dims through torch: hd512 forward, hd384 varlen and hd288 autograd stay fast;
    # SDPA's registry at hd320 repeats the hd288 kernels behind test_sdpa_registry's own calls
    "torch_lane/test_attention_large_hd.py::test_sdpa_registry_runs_hd320_forward_and_backward": None,
    # PostgreSQL sweeps: the lost-twice retry (a heartbeat expiry on PostgreSQL) and the outage past
    # the bound (the reconnect loop) stay fast (two workers on one study: below);
    # the kill -9 heartbeat retry and the outage that comes back (~10 s of sleeps each) are slow
    "sweep/test_postgres_sweep.py::test_kill_9_one_worker_its_trial_fails_by_heartbeat_and_the_other_worker_retries_it":
        None,
    "sweep/test_postgres_reconnect.py::test_an_outage_shorter_than_the_bound_is_retried_and_the_sweep_completes":
        None,
    # kill -9 and two concurrent sweeps: the journal file in the fast tier (its own locking and
    # torn-tail repair); SQLite is optuna's RDB storage, which the PostgreSQL tests drive
    "sweep/test_crash_recovery.py::test_kill_9_mid_trial_then_rerun_loses_and_repeats_nothing":
        lambda p: p["storage"] == "journal",
    "sweep/test_crash_recovery.py::test_two_concurrent_sweeps_share_the_budget_and_never_repeat_a_schedule":
        lambda p: p["storage"] == "journal",
    # the device-resident calls on drawn views (hypothesis property suites, like props/): the
    # attention forward suite stays fast (the launcher's one addressable/refusal rule); the GEMM
    # and backward suites are slow -- their refusals keep the fixed cases
    # test_issue24_views_numpy_api_exact_device_path_refuses and test_backward_refusal_writes_nothing
    "emu/test_device_calls_views.py::test_gemm_into_views_equal_the_contiguous_call_or_are_refused": None,
    "emu/test_device_calls_views.py::test_attention_backward_into_views_equal_the_contiguous_call_or_are_refused":
        None,
    # the dispatch order of the backward's kernels is host code, the same for every arch
    "emu/test_attention_bwd_determinism.py::test_bit_identical_when_dispatch_order_is_reversed":
        lambda p: p["arch"] == GFX11,
    # softcap: each masked shape once, alternating the family; the saturated logits on both
    "emu/test_attention_softcap.py::test_causal_gqa_sq_ne_sk_f16": lambda p: p["arch"] == GFX11,
    "emu/test_attention_softcap.py::test_window_sq_gt_sk_bf16": lambda p: p["arch"] == GFX12,
    "emu/test_attention_softcap.py::test_varlen_causal_bf16": lambda p: p["arch"] == GFX11,
    # split-KV decode at the new head dims: each head dim once, alternating the family
    "emu/test_attention_headdims_all.py::test_forward_split_kv":
        lambda p: p["arch"] == {16: GFX11, 176: GFX12, 240: GFX11}[p["head_dim"]],
    # the float64 reference's gradient against finite differences: a check of the test oracle,
    # which no package edit changes; the kernels' softcap gradients stay fast
    "torch_lane/test_softcap.py::test_reference_gradcheck": None,
    # softcap through torch's autograd: the GQA causal f16 case and the varlen case stay fast; the
    # windowed bf16 Sq > Sk case repeats that plumbing on a kernel variant tests/emu runs fast
    # (test_attention_softcap.py::test_window_sq_gt_sk_bf16 on gfx1201)
    "torch_lane/test_softcap.py::test_flash_attn_func_softcap_autograd":
        lambda p: p["case"] == "gqa_causal_f16",
    # PostgreSQL, two processes on one study: the claims-table case (one schedule per trial on
    # PostgreSQL) and the journal's two workers stay fast, as do the real objective (other sweep
    # tests) and the ladder/export from the database; their composition -- the harness's
    # claims-per-trial audit and the CLI's `--workers 2` end to end (13 s, the fast tier's longest
    # test on a warm idle run) -- is slow
    "sweep/test_postgres_sweep.py::test_two_workers_share_one_study_every_trial_runs_once_and_the_ladder_rebuilds":
        None,
    "sweep/test_postgres_cli.py::test_sweep_with_two_workers_on_postgresql_end_to_end": None,
    # the Triton peers of bench/peers.py on the emulator: gfx1151 is gfx1100's WMMA (docs/targets.md);
    # the FA-2 forward once per family (causal on gfx1100, not on gfx1201); its backward causal
    # (the masked loop is a superset of the unmasked one)
    "peers/test_peers_triton.py::test_triton_gemm_runs_on_the_emulator_and_matches_numpy":
        lambda p: p["arch"] != "gfx1151",
    "peers/test_peers_triton.py::test_triton_fa2_forward_runs_on_the_emulator_and_matches_numpy":
        lambda p: p["causal"] == (p["arch"] == GFX11),
    "peers/test_peers_triton.py::test_triton_fa2_backward_for_gfx1100_matches_the_float64_reference_on_the_emulator":
        lambda p: p["causal"],
    # --- fourth pass (issue 39 item 5) ---------------------------------------------------------
    # the real CLI sweep killed at a random moment and rerun: the journal's kill -9 and rerun (the
    # trial lost and retried exactly once) is test_crash_recovery's fast journal case, the CLI sweep
    # end to end test_sweep.py's; it costs 3-5 s of CPU (before autotune/journal_lock.py a kill inside
    # the journal lock made the rerun wait out Optuna's 30 s grace: 3-38 s of wall on one commit)
    "sweep/test_resume.py::test_sigkill_then_rerun_keeps_finished_trials": None,
    # the decoder against LLVM's text (a second codegen per case): gfx1151 is gfx1100's WMMA and
    # encoding family (docs/targets.md), decoded by the same gfx11 tables the gfx1100 cases check
    "emu/test_decode_crosscheck.py::test_gemm_decodes_like_its_isa_text": lambda p: p["arch"] != "gfx1151",
    "emu/test_decode_crosscheck.py::test_attention_decodes_like_its_isa_text": lambda p: p["arch"] != "gfx1151",
    # hypothesis property suites (derandomized, 12-115 examples each)
    "props/test_gemm_properties.py": None,
    "props/test_gemm_one_object_many_shapes.py": None,
    "props/test_attention_properties.py": None,
    "props/test_attention_bwd_properties.py::test_backward_matches_reference": None,
    "props/test_strided_operands.py::test_gemm_of_views_matches_float64": None,
    "props/test_strided_operands.py::test_attention_and_backward_of_views_match_float64": None,
}


def _shipped_fast(p: dict) -> bool:
    e = p["entry"]
    return p["op"] != "paged_attention" or (e.get("head_dim") == 128 and e.get("bucket") == {
        "seq": 8192, "batch": 1, "seq_q": 1})

GROUPS: tuple[str, ...] = (
    "props/test_gemm_properties.py",          # test_property_suite_ran_enough_cases counts the cases run
    "props/test_gemm_one_object_many_shapes.py",  # test_objects_were_shared_across_shapes reads OBJECTS
    # one subprocess report per provider and process (_REPORTS): one worker pays for it, not each
    "compile/test_providers.py::test_provider_compiles_every_case",
    "compile/test_providers.py::test_providers_agree",
)


# Files whose tests share one expensive module-scoped fixture (a sweep and export, a bench module
# with its Triton builds): xdist's `load` splits a file between the workers, and each worker then
# builds the fixture (test_problems_sweep's sweep, ~5 s of CPU, ran twice). In one group it is built
# once. Unlike GROUPS no test reads another's counters, so their tests may sit in either tier.
SHARED_SETUP: tuple[str, ...] = (
    "sweep/test_problems_sweep.py",
    "sweep/test_attention_sweep.py",
    "sweep/test_attention_bwd_sweep.py",
    "sweep/test_paged_attention_sweep.py",
    "emu/test_mla_sweep.py",
    "torch_lane/test_record_problems.py",
    "torch_lane/test_record_attention_softcap.py",
    "torch_lane/test_record_paged_softcap.py",
    "peers/test_peers_triton.py",
)


def group_of(rel_file: str, name: str) -> str | None:
    """The xdist group of a test (its file), or None."""
    grouped = rel_file in GROUPS or f"{rel_file}::{name}" in GROUPS or rel_file in SHARED_SETUP
    return rel_file if grouped else None


def rule_for(rel_file: str, name: str) -> tuple[str | None, Fast]:
    """(the matching rule, its fast predicate) for a test function `name` in tests/`rel_file`."""
    key = f"{rel_file}::{name}"
    if key in SLOW:
        return key, SLOW[key]
    if rel_file in SLOW:
        return rel_file, SLOW[rel_file]
    return None, None


def is_slow(rel_file: str, name: str, params: dict) -> tuple[str | None, bool]:
    rule, fast = rule_for(rel_file, name)
    if rule is None:
        return None, False
    return rule, not (fast is not None and fast(params))
