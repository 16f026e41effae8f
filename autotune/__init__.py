"""Autotuner: Optuna studies over wmma_gen schedules (space, objective, study, ladder, export).

    wmma-gen sweep --quick --arch gfx1100      # studies -> results/gfx1100/gemm_ladder.*
    wmma-gen export --arch gfx1100             # ladder  -> schedules/gfx1100-gemm-<dtype>.json
"""
