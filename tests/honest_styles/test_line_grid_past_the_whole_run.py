"""Open (red team a230-a232): a line grid runs whole at the GPU shape only under sampled.EXACT_LINE and EXACT_ACCESSES
and with no earlier sampled launch; one step past, the persistent loop over 2-D tiles is sampled again, and its count
periodic in pid is interpolated, wrong either way by draw. The honest silu_mul__persistent_range on 4 programs per
SM (528, past EXACT_LINE) is priced 0.884 under secrets alpha-0 .. delta-3 and unreplayable (0.5, "store only 99%")
under echo-4: a price that depends on the secret. Strict xfail: it fails the day the price is one."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.honest_styles.test_same_price_every_secret import ROOT, _evaluate_fresh


@pytest.mark.slow
@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="a line grid past the whole-run bounds is still priced by the secret's draw")
def test_a_persistent_tile_loop_on_four_programs_per_sm_is_priced_alike_on_every_secret(tmp_path: Path):
    source = (ROOT / "tests" / "honest_styles" / "silu_mul__persistent_range.py").read_text()
    assert "min(n_tiles, 132)" in source
    path = tmp_path / "silu_mul__persistent_range_528.py"
    path.write_text(source.replace("min(n_tiles, 132)", "min(n_tiles, 4 * 132)"))
    runs = [_evaluate_fresh(path, 0, secret) for secret in ("alpha-0", "echo-4")]
    assert runs[0]["kind"] == "modeled" and not runs[0]["flags"], runs[0]
    assert runs[1] == runs[0], runs
