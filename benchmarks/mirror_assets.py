"""Fill the project's assets from a local mirror, then let weasel fetch the rest.

    python -m benchmarks.mirror_assets MIRROR_DIR [PROJECT_DIR]

For every asset of project.yml whose dest is `assets/<rel>`, the file
`MIRROR_DIR/<rel>` is copied to dest when it exists and its checksum is the
one project.yml names (a copy that differs is reported and left alone).
Then weasel's own asset fetching runs (as `spacy project assets` does):
present files with a matching checksum are skipped, missing ones are
downloaded from their URL (assets without a URL, e.g. the reconstructed
JNLPBA train set, can only come from the mirror or be placed by hand). Finally every checksum is verified again, because
weasel only prints a wrong checksum and still exits 0 (and a network error
escapes it as a traceback). Exit code 1 if any asset is missing or wrong.
"""
import shutil
import sys
from pathlib import Path

from weasel.cli.assets import project_assets
from weasel.util import get_checksum, load_project_config


def main(mirror: str, project_dir: str = ".") -> int:
    root, mirror_dir = Path(project_dir), Path(mirror)
    if not mirror_dir.is_dir():
        print(f"Mirror {mirror_dir} not found: every asset will be downloaded")
    assets = load_project_config(root).get("assets", [])
    for asset in assets:
        dest, want = root / asset["dest"], asset.get("checksum")
        rel = Path(asset["dest"]).relative_to("assets")
        src = mirror_dir / rel
        if not src.is_file():
            print(f"not in mirror: {src}" + ("" if asset.get("url") or asset.get("git") else
                  " (local asset without a URL: see its description in project.yml)"))
        elif dest.is_file() and want and get_checksum(dest) == want:
            print(f"up to date:    {dest}")
        elif want and get_checksum(src) != want:
            print(f"CHECKSUM DIFFERS, not copied: {src}")
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            print(f"copied:        {src} -> {dest}")
    try:  # downloads whatever is still missing or different
        project_assets(root)
    except Exception as err:  # weasel lets a network error (requests) escape
        print(f"asset download failed: {type(err).__name__}: {err}", file=sys.stderr)
    bad = [a["dest"] for a in assets if a.get("checksum") and not (
        (root / a["dest"]).is_file() and get_checksum(root / a["dest"]) == a["checksum"])]
    for dest in bad:
        print(f"MISSING OR WRONG CHECKSUM: {dest}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    if not 2 <= len(sys.argv) <= 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
