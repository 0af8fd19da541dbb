#!/bin/bash
# Issue 38's measurements on a lent many-core machine, from the bundle that
# benchmarks/device/bundle.sh makes in .dev16/ and .dev16p/ (the compared
# pipeline; run from the repository root, carrying .dev16 in a first call
# and .dev16p in the next, on the still-warm machine: together they are
# over a call's 64 MiB): SECTIONS picks among threads, pipethreads, parser,
# annotate, ipm (default: all five, ~12 minutes on a 16-core Xeon: more than
# one call allows; split them; pipethreads and parser need .dev16p).
# SMALL=1: tiny sizes, for a dry run here.
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/dev16out}; mkdir -p "$OUT"
PY=${PY:-python3}
D=.dev16
SECTIONS=${SECTIONS:-threads pipethreads parser annotate ipm}
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
SITE=${SITE:-/tmp/site}
# bytecode compiled once, on every core, before anything is timed: the bundle
# has none (size), and a process that finds none compiles spaCy, numpy and
# Dask at each import (1.8 s of CPU each here) when PYTHONDONTWRITEBYTECODE is
# set, as it is here: every worker of every run would pay it
[ -d "$SITE/spacy" ] || { mkdir -p "$SITE" && tar -C "$SITE" -xJf $D/site.tar.xz \
  && { $PY -m compileall -q -j 0 "$SITE" > /dev/null 2>&1; el "site compiled"; }; } || exit 3
[ -d $D/m ] || tar -C $D -xJf $D/models.tar.xz || exit 4
[ -d $D/data ] || tar -C $D -xJf $D/data.tar.xz || exit 4
# the compared pipeline comes in .dev16p, carried in a call of its own (size)
[ -d $D/m/standin ] || [ ! -f .dev16p/pipeline.tar.xz ] || tar -C $D -xJf .dev16p/pipeline.tar.xz || exit 4
# run from a venv of the bundle alone: the device image has torch, cupy and
# jax installed system-wide, and thinc imports torch and cupy wherever it
# finds them (importing spaCy took 3.4-5.8 s per process there, most of
# annotate's fixed costs at 16 workers); a user's clean venv has none of them
if [ "${NOVENV:-0}" != 1 ]; then
  [ -x /tmp/venv16/bin/python ] || $PY -m venv --without-pip /tmp/venv16 || exit 6
  PY=/tmp/venv16/bin/python
fi
export PYTHONPATH=$SITE:$PWD
$PY -c "import importlib.util as u; print('torch importable:', u.find_spec('torch') is not None)"
$PY -c "import spacy, numpy, dask, distributed, spacy_lookahead.spacy_io as s; print('spacy', spacy.__version__, 'numpy', numpy.__version__, 'dask', dask.__version__, s.__file__)" || exit 5
# (nproc obeys OMP_NUM_THREADS: lscpu says what the cores are)
lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name|L2|L3|NUMA node\(s\))" || nproc --all
grep -m1 -o "avx512[a-z_]*" /proc/cpuinfo | head -1
el setup done
# MINS: benchmarks.gil's --min-seconds (one thread's pass at least this long;
# its 1 s default would take the threads section past its timeout at 5 counts;
# at 16 threads a 0.25 s pass is 16 ms, short enough to understate the
# scaling, as 4 copies did on 2 cores: fewer models (GILM) buy longer passes)
GILM=${GILM:-"tagger_d1 ner_rtl_d1 chunker_d1 parser_ewt_greedy parser_ewt_beam8_early fr_chunker clauses_fr ner_rtl_sapo chunker_sapo"}
if [ "${SMALL:-0}" = 1 ]; then TH="1 2"; COP=1; MINS=0; REP=1; PAIRS=1; ANNREP=2; ANNW="1 2"; IPMW="1 2"; ROUNDS=2
else TH="1 2 4 8 16"; COP=4; MINS=${MINS:-0.25}; REP=3; PAIRS=5; ANNREP=${ANNREP:-400}; ANNW=${ANNW:-"1 2 4 8 16"}; IPMW=${IPMW:-"1 2 4 8"}; ROUNDS=${ROUNDS:-6}; fi
M=$D/m
for section in $SECTIONS; do
  case $section in pipethreads|parser) [ -d $M/standin ] || {
    echo "$section: no $M/standin: carry .dev16p (bundle.sh's pipeline) in this call"; continue; };; esac
  case $section in
  threads)  # GIL-held share, tokens/s at 1..16 threads, identical outputs
    timeout ${TB:-200} $PY -m benchmarks.gil $(for x in $GILM; do echo $M/$x; done) --data $D/data \
      --copies $COP --min-seconds $MINS --threads $TH --repeats $REP --output "$OUT/gil.json" \
      > "$OUT/gil.txt" 2>&1; echo "threads rc $?"; grep "^|" "$OUT/gil.txt";;
  pipethreads)  # the same for the shipped pipeline's tagger and joint parser (the parser on
    # the tagger's outputs: benchmarks.gil's upstream())
    timeout ${TP:-200} $PY -m benchmarks.gil $M/standin --data $D/data --copies $COP --min-seconds $MINS \
      --threads $TH --repeats $REP --output "$OUT/gil_pipeline.json" > "$OUT/gil_pipeline.txt" 2>&1
    echo "pipethreads rc $?"; grep "^|" "$OUT/gil_pipeline.txt";;
  parser)  # the shipped pipeline (or its stand-in) against spaCy's parser, same run
    timeout ${TC:-100} $PY -m benchmarks.speed $D/corpus/test.spacy spacy_parser=$M/spacy_parser \
      pipeline_ewt=$M/standin --task pipeline --reference spacy_parser --repeats 3 --pairs $PAIRS \
      --output "$OUT/speed_pipeline.json" > "$OUT/speed_pipeline.txt" 2>&1; echo "parser rc $?"
    grep -v "run/s" "$OUT/speed_pipeline.txt" | tail -4;;
  annotate)  # whole command, EWT test's texts x ANNREP (x400: 10.2M tokens)
    timeout ${TD:-330} $PY -m benchmarks.distributed_bench annotate tagger_d1=$M/tagger_d1=$D/corpus/test.spacy \
      --repeat $ANNREP --workers $ANNW --output "$OUT/annotate.json" > "$OUT/annotate.txt" 2>&1
    echo "annotate rc $?"; grep "runs" "$OUT/annotate.txt";;
  ipm)  # rounds at 1..8 workers and where their time goes
    timeout ${TE:-200} $PY -m benchmarks.device.ipm_stages $D/corpus/train.spacy $D/corpus/dev.spacy \
      --workers $IPMW --rounds $ROUNDS --output "$OUT/ipm.json" > "$OUT/ipm.txt" 2>&1; echo "ipm rc $?"
    grep -v "Warn\|warn" "$OUT/ipm.txt";;
  esac
  el "$section done"
done
