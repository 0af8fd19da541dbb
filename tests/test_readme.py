"""Every Python block of the README and of docs/*.md runs as written (in a
fresh namespace, in a temporary directory, each block on its own)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README] + sorted((ROOT / "docs").glob("*.md"))


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf8"), re.S)


BLOCKS = [(path.relative_to(ROOT).as_posix(), index, block)
          for path in PAGES for index, block in enumerate(python_blocks(path))]


def test_the_readme_has_python_blocks():
    assert len(python_blocks(README)) >= 2


@pytest.mark.parametrize("page,index,block", BLOCKS,
                         ids=[f"{page}-{index + 1}" for page, index, _ in BLOCKS])
def test_python_block_runs(page, index, block, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks may save models
    exec(compile(block, f"{page} python block {index + 1}", "exec"), {})
    assert capsys.readouterr().out  # every block shows its result
