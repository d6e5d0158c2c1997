"""The README's tour must keep working: its Python block is executed as written.

Its private releases use fresh entropy, so their printed output cannot be fixed: the test checks properties."""
import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def tour() -> str:
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert block, "README.md has no ```python block"
    return block.group(1)


def test_readme_tour_runs(capsys):
    namespace = {}
    exec(compile(tour(), "README.md", "exec"), namespace)
    printed = capsys.readouterr().out.split()
    p, q = namespace["p"], namespace["q"]
    kl = float(np.sum(p * np.log(p / q)))               # KL(p || q) of the raw data, computed here
    value = float(printed[0])
    assert 0 < value <= kl                              # data processing: a channel cannot increase KL
    assert printed[-1] in ("True", "False")
    blocks = namespace["mech"].partition                 # the partition covers the alphabet, blocks disjoint
    assert sorted(x for block in blocks for x in block) == [0, 1, 2, 3]
    y = np.asarray(namespace["y"])
    assert y.shape == (4,) and np.issubdtype(y.dtype, np.integer) and ((0 <= y) & (y < len(blocks))).all()


def test_the_tour_teaches_fresh_entropy_for_private_releases():
    "A seed passed to a private release would make its output a deterministic function of the data."
    for call in ("mech.sample(", "dp_permutation_test("):
        line = next(line for line in tour().splitlines() if call in line)
        assert "rng" not in line and "seed" not in line, line
    text = " ".join(README.read_text().split())
    assert "fresh entropy" in text and "privacy guarantee no longer holds" in text
