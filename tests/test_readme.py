"""The README's Python examples run as written (in order, like a notebook session)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_python_blocks_run_in_order():
    assert len(BLOCKS) >= 3
    namespace: dict = {}
    for index, block in enumerate(BLOCKS):
        exec(compile(block, f"README.md python block {index}", "exec"), namespace)
    assert namespace["best"].best.config.machines <= 20
    assert namespace["T"].shape == (64, 3)
