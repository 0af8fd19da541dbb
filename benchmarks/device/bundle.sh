#!/bin/bash
# Makes .dev16/ (git-ignored) for benchmarks/device/run16.sh on a lent
# many-core machine that has Python 3.12 and nothing of ours: a site-packages
# bundle (spaCy, thinc, numpy, Dask and this project built for 3.12), the
# quick workflow's models, a spaCy parser and a pipeline_ewt stand-in, and
# the data the benchmarks read. Needs python3.12 here and network access to
# PyPI. Usage: bash benchmarks/device/bundle.sh SPACY_PARSER_DIR PIPELINE_DIR
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PARSER=${1:?spaCy parser model dir (configs/baseline_parser_ewt.cfg)}
PIPELINE=${2:?pipeline_ewt (or its stand-in) model dir}
# absolute: the script changes directory before it copies them
PARSER=$(cd "$PARSER" && pwd) PIPELINE=$(cd "$PIPELINE" && pwd)
PY312=${PY312:-python3.12}
OUT=$ROOT/.dev16 OUTP=$ROOT/.dev16p
WORK=$(mktemp -d)
mkdir -p "$OUT" "$ROOT/.git/info"
for d in .dev16 .dev16p; do
  grep -qs "^/$d/" "$ROOT/.git/info/exclude" || echo "/$d/" >> "$ROOT/.git/info/exclude"
done
$PY312 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "spacy==3.8.18" "thinc==8.3.14" "numpy==2.4.6" \
    "dask[distributed]==2026.8.0" cython setuptools wheel
git -C "$ROOT" archive HEAD | tar -x -C "$WORK" --one-top-level=src_tree
"$WORK/venv/bin/pip" install -q --no-deps --no-build-isolation "$WORK/src_tree"
SITE=$("$WORK/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mkdir "$WORK/site"
for d in "$SITE"/*; do
  case "$(basename "$d")" in
    pip|pip-*|setuptools|setuptools-*|Cython|cython-*|cython.py|pyximport|_distutils_hack|distutils-precedence.pth|__pycache__) ;;
    *) cp -r "$d" "$WORK/site/" ;;
  esac
done
cd "$WORK/site"
# spaCy's languages but those the models and spaCy's registry import
find spacy/lang -mindepth 1 -maxdepth 1 -type d | grep -vE "spacy/lang/(en|fr|xx|ja|ko|th|vi|zh)$" | xargs rm -rf
rm -rf spacy/tests thinc/tests numpy/tests dask/tests distributed/tests
find . -name __pycache__ -prune -exec rm -rf {} +
# strip the extensions, not the *.libs folders (auditwheel's patched libraries break)
find . -name "*.so" -not -path "*.libs/*" -exec strip --strip-unneeded {} + 2>/dev/null || true
tar -cf - . | xz -6 -T2 > "$OUT/site.tar.xz"
mkdir -p "$WORK/m/m" "$WORK/d/data/ud_ewt" "$WORK/d/data/conll2000" "$WORK/d/data/jnlpba" \
    "$WORK/d/data/wsj_clauses" "$WORK/d/corpus"
for x in tagger_d1 ner_rtl_d1 chunker_d1 parser_ewt_greedy parser_ewt_beam8_early fr_chunker clauses_fr \
    ner_rtl_sapo chunker_sapo; do
  cp -r "$ROOT/training/quick/$x/model-best" "$WORK/m/m/$x"
done
cp -r "$PARSER" "$WORK/m/m/spacy_parser"
tar -C "$WORK/m" -cf - m | xz -6 -T2 > "$OUT/models.tar.xz"
# the compared pipeline in a folder of its own: the shipped pipeline_ewt is
# 46 MB compressed, and a call carries at most 64 MiB with the working tree
# (run16.sh's README: carry .dev16 in one call, .dev16p in the next)
mkdir -p "$WORK/p/m" "$OUTP"
cp -r "$PIPELINE" "$WORK/p/m/standin"
tar -C "$WORK/p" -cf - m | xz -6 -T2 > "$OUTP/pipeline.tar.xz"
DATA=$ROOT/../shared/data
cp "$DATA"/ud_ewt/en_ewt-ud-{dev,test}.conllu "$WORK/d/data/ud_ewt/"
cp "$DATA/conll2000/test.txt" "$WORK/d/data/conll2000/"
cp "$DATA/jnlpba/test.iob2" "$WORK/d/data/jnlpba/"
cp "$DATA/wsj_clauses/dev.txt" "$WORK/d/data/wsj_clauses/"
cp "$ROOT"/corpus/ewt/{train,dev,test}.spacy "$WORK/d/corpus/"
tar -C "$WORK/d" -cf - data corpus | xz -6 -T2 > "$OUT/data.tar.xz"
cp "$ROOT/benchmarks/device/run16.sh" "$OUT/run.sh"
rm -rf "$WORK"
# what each call carries, with the working tree (tracked files) beside it
TREE=$(git -C "$ROOT" ls-files -z | (cd "$ROOT" && xargs -0 du -cb) | tail -1 | cut -f1)
for d in "$OUT" "$OUTP"; do
  SIZE=$(( $(du -cb "$d"/* | tail -1 | cut -f1) + TREE ))
  echo "$(basename "$d") + the working tree: $SIZE bytes$( [ $SIZE -gt 67108864 ] && echo ": over the 64 MiB a call carries")"
done
