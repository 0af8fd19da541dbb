"""Fill the project's assets from a local mirror, else from their public sources.

    python -m benchmarks.mirror_assets MIRROR_DIR [PROJECT_DIR]

1. For every asset of project.yml whose dest is `assets/<rel>`, the file
   `MIRROR_DIR/<rel>` is copied to dest when it exists and its checksum is
   the one project.yml names (a copy that differs is reported and left alone).
2. Weasel's own asset fetching runs (as `spacy project assets` does): files
   with a matching checksum are skipped, missing ones with a URL downloaded.
3. A derived asset still missing (CoNLL-2000, the JNLPBA training set, the
   WSJ samples: no public file has their bytes) is rebuilt by
   benchmarks/derive from the upstream files it comes from: the `extra`
   assets (pinned to a commit, with checksums), fetched only then.
Finally every checksum is verified again, because weasel only prints a wrong
checksum and still exits 0 (and a network error escapes it as a traceback).
Exit code 1 if any asset is missing or wrong.
"""
import shutil
import sys
from pathlib import Path
from typing import Any, Dict

from weasel.cli.assets import fetch_asset, project_assets
from weasel.util import get_checksum, git_checkout, load_project_config

from benchmarks.derive import RECIPES


def matches(root: Path, asset: Dict[str, Any]) -> bool:
    dest = root / asset["dest"]
    return dest.exists() and get_checksum(dest) == asset.get("checksum")


def copy_from_mirror(root: Path, mirror_dir: Path, asset: Dict[str, Any]) -> None:
    dest, want = root / asset["dest"], asset.get("checksum")
    src = mirror_dir / Path(asset["dest"]).relative_to("assets")
    if not src.is_file():
        print(f"not in mirror: {src}")
    elif dest.is_file() and want and get_checksum(dest) == want:
        print(f"up to date:    {dest}")
    elif want and get_checksum(src) != want:
        print(f"CHECKSUM DIFFERS, not copied: {src}")
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        print(f"copied:        {src} -> {dest}")


def fetch_upstream(root: Path, asset: Dict[str, Any]) -> None:
    """One upstream (`extra`) asset, downloaded unless present and right."""
    if matches(root, asset):
        return
    dest = root / asset["dest"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    if "git" in asset:
        if dest.exists():
            shutil.rmtree(dest)  # git_checkout refuses an existing destination
        git = asset["git"]
        git_checkout(git["repo"], git["path"], dest, branch=git.get("branch", "master"))
    else:
        fetch_asset(root, asset["url"], dest, asset.get("checksum"))
    if not matches(root, asset):
        raise ValueError(f"{dest} does not have the checksum project.yml names")


def derive_missing(root: Path, assets: Dict[str, Dict[str, Any]]) -> None:
    """Rebuild each derived asset that is still missing from its upstream files."""
    for recipe in RECIPES:
        if not set(recipe.outputs) <= assets.keys() or all(
                matches(root, assets[dest]) for dest in recipe.outputs):
            continue
        print(f"deriving:      {', '.join(recipe.outputs)} from {', '.join(recipe.inputs)}")
        try:
            for dest in recipe.inputs:
                fetch_upstream(root, assets[dest])
            recipe.make(root)
        except Exception as err:  # reported; the final check fails the command
            print(f"derivation failed: {type(err).__name__}: {err}", file=sys.stderr)


def main(mirror: str, project_dir: str = ".") -> int:
    root, mirror_dir = Path(project_dir), Path(mirror)
    if not mirror_dir.is_dir():
        print(f"Mirror {mirror_dir} not found: every asset comes from its public source")
    assets = {a["dest"]: a for a in load_project_config(root).get("assets", [])}
    needed = [a for a in assets.values() if not a.get("extra")]
    for asset in needed:
        copy_from_mirror(root, mirror_dir, asset)
    try:  # downloads whatever is still missing or different (not the extras)
        project_assets(root)
    except Exception as err:  # weasel lets a network error (requests) escape
        print(f"asset download failed: {type(err).__name__}: {err}", file=sys.stderr)
    derive_missing(root, assets)
    bad = [a["dest"] for a in needed if a.get("checksum") and not matches(root, a)]
    for dest in bad:
        print(f"MISSING OR WRONG CHECKSUM: {dest}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    if not 2 <= len(sys.argv) <= 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
