"""The README's tour must keep working: its Python block is executed as written."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_tour_runs(capsys):
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert block, "README.md has no ```python block"
    exec(compile(block.group(1), "README.md", "exec"), {})
    printed = capsys.readouterr().out.split()
    assert float(printed[0]) > 0 and printed[-1] in ("True", "False")
