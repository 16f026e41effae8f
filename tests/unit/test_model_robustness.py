"""model/params.changed and model/robustness.flips: the sensitivity check export applies to
model-ranked wins (issue 25 item 3)."""
import pytest

from wmma_gen.model import params, robustness


def test_changed_replaces_only_inside_the_context_and_only_for_that_arch():
    before = params.params_for("gfx1100").l2_bytes_per_clk
    with params.changed("gfx1100", l2_bytes_per_clk=1024) as p:
        assert p.l2_bytes_per_clk == params.params_for("gfx1100").l2_bytes_per_clk == 1024
        assert params.params_for("gfx1201") == params.PARAMS["gfx1201"]
        with params.changed("gfx1100", lds_latency_clk=7):
            assert (params.params_for("gfx1100").l2_bytes_per_clk, params.params_for("gfx1100").lds_latency_clk) == (1024, 7)
    assert params.params_for("gfx1100").l2_bytes_per_clk == before


def test_changed_refuses_an_unknown_parameter_by_name():
    with pytest.raises(ValueError, match="'l3_bytes' is not allowed"):
        with params.changed("gfx1100", l3_bytes=1):
            pass


def test_every_assumption_row_is_a_parameter_and_documented():
    fields = set(params.ModelParams.__dataclass_fields__)
    assert robustness.ASSUMPTIONS and set(robustness.ASSUMPTIONS) <= fields
    assert "l2_bytes_per_clk" in robustness.ASSUMPTIONS and "lds_bank_bytes" not in robustness.ASSUMPTIONS


def test_flips_names_the_variations_that_reverse_a_ranking():
    # a "tuned" figure that needs L2 bandwidth, a default that does not
    def figures():
        p = params.params_for("gfx1100")
        return p.l2_bytes_per_clk / 20.0, 95.0
    found = robustness.flips("gfx1100", figures)
    assert [(f.parameter, f.factor) for f in found] == [("l2_bytes_per_clk", 0.5)]
    assert found[0].mine == pytest.approx(params.PARAMS["gfx1100"].l2_bytes_per_clk // 2 / 20.0)   # int field
    assert "l2_bytes_per_clk x0.5" in str(found[0])


def test_flips_is_empty_for_a_win_no_assumption_reverses():
    assert robustness.flips("gfx1201", lambda: (params.params_for("gfx1201").vmem_latency_clk, 1.0)) == []


def test_a_value_measured_on_that_product_is_not_varied():
    # gfx1102's L2 bandwidth is measured (params.MEASURED); gfx1100's is only scaled from it
    def figures(arch):
        return lambda: (params.params_for(arch).l2_bytes_per_clk, 0.75 * params.PARAMS[arch].l2_bytes_per_clk)
    assert robustness.flips("gfx1102", figures("gfx1102")) == []
    assert [(f.parameter, f.factor) for f in robustness.flips("gfx1100", figures("gfx1100"))] == [("l2_bytes_per_clk", 0.5)]
