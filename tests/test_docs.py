"""The documentation: docs/settings.md is what docs/generate_settings.py
writes from the code (byte for byte), the README stays short and keeps its
two quick-start commands, and no link leaves the repository or points at a
file or heading that does not exist."""
import difflib
import importlib.util
import re
import unicodedata
from pathlib import Path

import pytest
from spacy.language import Language

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
SETTINGS = DOCS / "settings.md"
PAGES = [README] + sorted(DOCS.glob("*.md"))
QUICK_START = [
    "pip install -e . && python -m spacy project run quick . --vars.mirror ../shared/data",
    'pip install -e ".[test,distributed]" && python -m pytest -q tests',
]


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("generate_settings", DOCS / "generate_settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stale_message(committed: str, fresh: str) -> str:
    diff = difflib.unified_diff(committed.splitlines(), fresh.splitlines(),
                                "docs/settings.md (committed)", "docs/settings.md (from the code)",
                                lineterm="", n=1)
    return ("docs/settings.md is stale: run `python -m spacy project run docs` (or "
            "`python docs/generate_settings.py`) and commit the result.\n"
            + "\n".join(list(diff)[:40]))


def test_settings_reference_is_current(generator):
    fresh = generator.render().encode("utf8")
    committed = SETTINGS.read_bytes()
    assert committed == fresh, stale_message(committed.decode("utf8"), fresh.decode("utf8"))


def test_a_changed_default_makes_the_reference_stale(generator, monkeypatch, tmp_path):
    """The comparison above can fail: a default changed in the code changes
    the reference, and --check reports the committed file stale."""
    out = tmp_path / "settings.md"
    assert generator.main(["--output", str(out)]) == 0
    assert generator.main(["--check", "--output", str(out)]) == 0
    assert out.read_bytes() == SETTINGS.read_bytes()
    defaults = Language.get_factory_meta("lookahead_tagger").default_config
    monkeypatch.setitem(defaults, "n_threads", 2)
    fresh = generator.render()
    assert fresh.encode("utf8") != SETTINGS.read_bytes()
    assert "| `n_threads` | `2` | `1` | `1` | `1` | `1` | `1` |" in fresh
    assert generator.main(["--check", "--output", str(out)]) == 1


def test_the_reference_reads_the_validator(generator, monkeypatch):
    """What a setting accepts is the rule its validator states: a
    component's (settings.check_values), or a block's function."""
    from spacy_lookahead.pipes import search, settings
    monkeypatch.setattr(search, "MAX_DEPTH", 5)
    monkeypatch.setattr(settings, "MAX_TEMPERATURE", 7.0)
    text = generator.render()
    assert "`depth`: default `1`; an integer in 0..5 " in text
    assert "a number in (0, 7]" in text


def test_every_block_setting_needs_an_explanation(generator, monkeypatch):
    monkeypatch.delitem(generator.BLOCK_PROSE["spacy_lookahead.SAPO.v1"], "l2")
    with pytest.raises(SystemExit, match="spacy_lookahead.SAPO.v1 differ: \\['l2'\\]"):
        generator.render()


def test_every_setting_needs_an_explanation(generator, monkeypatch):
    defaults = Language.get_factory_meta("fr_chunker").default_config
    monkeypatch.setitem(defaults, "new_setting", 1)
    with pytest.raises(SystemExit, match="no explanation of fr_chunker.new_setting"):
        generator.render()
    monkeypatch.delitem(defaults, "new_setting")
    monkeypatch.setitem(generator.PROSE, "gone_setting", "An explanation of nothing.")
    with pytest.raises(SystemExit, match="gone_setting"):
        generator.render()


def test_the_readme_is_short():
    lines = README.read_text(encoding="utf8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move detail to docs/"


def test_the_quick_start_is_two_commands():
    text = README.read_text(encoding="utf8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert commands == QUICK_START
    ci = ROOT / ".ci" / "run"
    if ci.exists():  # CI runs the README's test command as it is written
        assert QUICK_START[1] in ci.read_text(encoding="utf8").splitlines()


def without_code(text: str) -> str:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = heading.strip().lower().replace("`", "")
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path: Path):
    seen, out = {}, set()
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf8"), flags=re.S)
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def links(path: Path):
    return re.findall(r"\]\(([^)\s]+)\)", without_code(path.read_text(encoding="utf8")))


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_links_stay_in_the_repository(page):
    for target in links(page):
        if re.match(r"[a-z]+://", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        assert dest.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert dest.exists(), f"{page.name}: {target} does not exist"
        if anchor and dest.suffix == ".md":
            assert anchor in anchors(dest), f"{page.name}: no heading #{anchor} in {dest.name}"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_nothing_points_outside(page):
    """The benchmark data's place is the --vars.mirror variable: only the
    quick-start command names a directory outside the repository."""
    text = page.read_text(encoding="utf8")
    for command in QUICK_START:
        text = text.replace(command, "")
    assert "../shared" not in text and "shared/" not in text
