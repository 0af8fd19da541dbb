"""project.yml's data: every asset has a public source (a URL, or a rebuild
from pinned upstream files), and the mirror command rebuilds a derived asset
byte for byte when the mirror lacks it."""
import hashlib
import re
import zipfile
from pathlib import Path

import srsly

from benchmarks import mirror_assets
from benchmarks.derive import RECIPES

ROOT = Path(__file__).resolve().parents[1]


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_every_asset_has_a_public_source_and_a_checksum():
    assets = {a["dest"]: a for a in srsly.read_yaml(ROOT / "project.yml")["assets"]}
    derived = {dest: recipe for recipe in RECIPES for dest in recipe.outputs}
    for dest, asset in assets.items():
        assert asset.get("checksum"), dest
        if asset.get("extra"):  # an upstream file: a URL pinned to a commit, or a git folder
            assert asset.get("git") or re.search(r"/[0-9a-f]{40}/", asset["url"]), dest
        else:
            assert asset.get("url") or dest in derived, f"{dest}: no URL and no recipe"
    for recipe in RECIPES:
        assert set(recipe.outputs) <= assets.keys()
        assert all(assets[dest].get("extra") for dest in recipe.inputs), recipe


def test_every_data_file_the_workflow_reads_is_an_asset():
    assets = {a["dest"] for a in srsly.read_yaml(ROOT / "project.yml")["assets"]}
    sources = [ROOT / "project.yml", *sorted((ROOT / "benchmarks").glob("*.py")),
               *sorted((ROOT / "configs").glob("*.cfg"))]
    read = {m for path in sources for m in
            re.findall(r"assets/[\w./-]+\.(?:txt|iob2|conllu|conll|zip)", path.read_text())}
    assert len(read) >= 12 and read <= assets, sorted(read - assets)


def conll2000_project(tmp_path: Path, zip_checksum: str = "") -> bytes:
    """A project whose CoNLL-2000 comes from a local 'upstream' zip."""
    train, test = b"He PRP B-NP\nran VBD B-VP\n\n", b"It PRP B-NP\n\n"
    upstream = tmp_path / "upstream.zip"
    with zipfile.ZipFile(upstream, "w") as archive:
        archive.writestr("conll2000/train.txt", train)
        archive.writestr("conll2000/test.txt", test)
    assets = [{"dest": "assets/conll2000/train.txt", "checksum": md5(train)},
              {"dest": "assets/conll2000/test.txt", "checksum": md5(test)},
              {"dest": "assets/upstream/nltk_data/conll2000.zip", "url": str(upstream),
               "checksum": zip_checksum or md5(upstream.read_bytes()), "extra": True}]
    srsly.write_yaml(tmp_path / "project.yml", {"title": "t", "assets": assets})
    return train


def test_a_derived_asset_missing_from_the_mirror_is_rebuilt_from_upstream(tmp_path):
    train = conll2000_project(tmp_path)
    assert mirror_assets.main(str(tmp_path / "no-mirror"), str(tmp_path)) == 0
    assert (tmp_path / "assets/conll2000/train.txt").read_bytes() == train
    # the upstream file was fetched because it was needed, and only then
    assert (tmp_path / "assets/upstream/nltk_data/conll2000.zip").is_file()


def test_a_mirror_copy_means_no_upstream_fetch(tmp_path):
    train = conll2000_project(tmp_path)
    mirror = tmp_path / "mirror/conll2000"
    mirror.mkdir(parents=True)
    (mirror / "train.txt").write_bytes(train)
    (mirror / "test.txt").write_bytes(b"It PRP B-NP\n\n")
    assert mirror_assets.main(str(tmp_path / "mirror"), str(tmp_path)) == 0
    assert not (tmp_path / "assets/upstream").exists()


def test_an_upstream_file_with_another_checksum_fails_the_command(tmp_path, capsys):
    conll2000_project(tmp_path, zip_checksum="0" * 32)
    assert mirror_assets.main(str(tmp_path / "no-mirror"), str(tmp_path)) == 1
    assert not (tmp_path / "assets/conll2000/train.txt").exists()
    err = capsys.readouterr().err
    assert "does not have the checksum" in err and "MISSING OR WRONG CHECKSUM: assets/conll2000/train.txt" in err
