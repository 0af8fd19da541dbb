"""benchmarks/derive/wsj.py on small hand-worked inputs: the README's rules
(shared/data/README.md, wsj_dep_sample/ and wsj_clauses/), no upstream data."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from benchmarks.derive import wsj

ROOT = Path(__file__).resolve().parents[1]


def make_zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def columns(tree: str) -> list[str]:
    """`word chunk clause` per word of one bracketed tree."""
    sentences = list(wsj.mrg_sentences(f"( {tree} )\n"))
    assert len(sentences) == 1
    lines = wsj.sentence_lines(sentences[0]).rstrip("\n").split("\n")
    return [" ".join(line.split(" ")[i] for i in (0, 2, 3)) for line in lines]


# --------------------------------------------------------------------------
# split by file, wsj_dep_sample


@pytest.mark.parametrize("name, split", [
    ("dependency_treebank/wsj_0001.dp", "train"), ("dependency_treebank/wsj_0159.dp", "train"),
    ("treebank/combined/wsj_0160.mrg", "dev"), ("wsj_0179.mrg", "dev"),
    ("wsj_0180.mrg", "test"), ("wsj_0199.mrg", "test"),
    ("wsj_0200.mrg", None), ("treebank/combined/README", None)])
def test_split_by_file(name, split):
    assert wsj.split_of(name) == split


def test_dependencies_malt_tab_to_conllx(tmp_path):
    upstream = make_zip(tmp_path / "dependency_treebank.zip", {
        "dependency_treebank/wsj_0160.dp": "Stocks\tNNS\t2\nfell\tVBD\t0\n.\t.\t2\n",
        "dependency_treebank/wsj_0001.dp": "He\tPRP\t2\nran\tVBD\t0\n\nIt\tPRP\t2\nrose\tVBD\t0\n",
        "dependency_treebank/wsj_0199.dp": "Yes\tUH\t0\n",
    })
    wsj.dependencies(upstream, tmp_path / "out")
    assert (tmp_path / "out/train.conll").read_text() == (
        "1\tHe\t_\tPRP\tPRP\t_\t2\tdep\t_\t_\n"
        "2\tran\t_\tVBD\tVBD\t_\t0\tROOT\t_\t_\n"
        "\n"
        "1\tIt\t_\tPRP\tPRP\t_\t2\tdep\t_\t_\n"
        "2\trose\t_\tVBD\tVBD\t_\t0\tROOT\t_\t_\n"
        "\n")
    assert (tmp_path / "out/dev.conll").read_text() == (
        "1\tStocks\t_\tNNS\tNNS\t_\t2\tdep\t_\t_\n"
        "2\tfell\t_\tVBD\tVBD\t_\t0\tROOT\t_\t_\n"
        "3\t.\t_\t.\t.\t_\t2\tdep\t_\t_\n"
        "\n")
    assert (tmp_path / "out/test.conll").read_text() == "1\tYes\t_\tUH\tUH\t_\t0\tROOT\t_\t_\n\n"


# --------------------------------------------------------------------------
# tree preprocessing


@pytest.mark.parametrize("label, base", [
    ("S-TPC-1", "S"), ("NP-SBJ", "NP"), ("NP=2", "NP"), ("ADVP-DIR=4", "ADVP"),
    ("PP-LOC-CLR", "PP"), ("VP", "VP"), ("-NONE-", "-NONE-"), ("-LRB-", "-LRB-")])
def test_base_labels(label, base):
    assert wsj.base_label(label) == base


def test_null_elements_and_their_empty_constituents_are_removed():
    tree = next(wsj.mrg_sentences(
        "( (S (NP-SBJ-1 (NNP Kent) ) (VP (VBD tried) (S (NP-SBJ (-NONE- *-1) ) "
        "(VP (TO to) (VP (VB win) (NP (-NONE- *T*-2) ))))) (. .) ))\n"))
    assert [w.word for w in tree.words()] == ["Kent", "tried", "to", "win", "."]
    s = tree.children[1].children[1]
    assert s.label == "S" and [c.label for c in s.children] == ["VP"]
    win = s.children[0].children[1]
    assert [c.label for c in win.children] == ["VB"]  # the NP of a trace is gone


# --------------------------------------------------------------------------
# CLAUSE column


def test_subjectless_clause_and_the_whole_sentence_clause():
    assert columns(
        "(S (NP-SBJ-1 (NNP Kent)) (VP (VBD tried) (S (NP-SBJ (-NONE- *-1)) "
        "(VP (TO to) (VP (VB make) (NP (NNS filters)))))) (. .))") == [
        "Kent B-NP (S*",
        "tried B-VP *",
        "to I-VP (S*",
        "make I-VP *",
        "filters B-NP *S)",
        ". O *S)",
    ]


def test_sbar_with_a_null_complementizer_and_its_s_are_one_clause():
    assert columns(
        "(S (NP-SBJ (PRP He)) (VP (VBD said) (SBAR (-NONE- 0) (S (NP-SBJ (PRP it)) "
        "(VP (VBD rose))))) (. .))") == [
        "He B-NP (S*", "said B-VP *", "it B-NP (S*", "rose B-VP *S)", ". O *S)"]


def test_one_word_clause_and_several_brackets_on_a_word():
    assert columns(
        "(S (NP-SBJ (PRP I)) (VP (VBP know) (SBAR (WHNP-1 (WP what)) "
        "(S (NP-SBJ (-NONE- *T*-1)) (VP (VBZ happens))))))") == [
        "I B-NP (S*", "know B-VP *", "what B-NP (S*", "happens B-VP (S*S)S)S)"]


def test_frag_and_rrc_are_not_clauses_nor_is_an_np_root():
    assert columns(
        "(NP (NP (NNS workers)) (RRC (VP (VBN exposed) (NP (-NONE- *)) "
        "(PP-CLR (TO to) (NP (PRP it))))))") == [
        "workers B-NP *", "exposed B-VP *", "to B-PP *", "it B-NP *"]
    assert columns("(FRAG (NP (NN Nothing)) (. .))") == ["Nothing B-NP *", ". O *"]


def test_sinv_sq_sbarq_are_clauses_written_as_s():
    assert columns(
        "(SBARQ (WHNP-1 (WP Who)) (SQ (NP-SBJ (-NONE- *T*-1)) (VP (VBD won))) (. ?))") == [
        "Who B-NP (S*", "won B-VP (S*S)", "? O *S)"]


def test_inverted_auxiliary_is_a_vp_chunk():
    assert columns("(SQ (VBZ Is) (NP-SBJ (PRP it)) (VP (VBG rising)) (. ?))") == [
        "Is B-VP (S*", "it B-NP *", "rising B-VP *", "? O *S)"]


# --------------------------------------------------------------------------
# CHUNK column: NP


def test_punctuation_is_o_and_splits_chunks():
    assert columns(
        "(S (NP-SBJ (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP (NP (CD 61) (NNS years)) "
        "(JJ old)) (, ,)) (VP (MD will) (VP (VB join))) (. .))") == [
        "Pierre B-NP (S*", "Vinken I-NP *", ", O *", "61 B-NP *", "years I-NP *",
        "old B-ADJP *", ", O *", "will B-VP *", "join I-VP *", ". O *S)"]


def test_np_with_a_possessive():
    assert columns("(NP (NP (NNP Mr.) (NNP Vinken) (POS 's)) (NN company))") == [
        "Mr. B-NP *", "Vinken I-NP *", "'s I-NP *", "company B-NP *"]


def test_flat_premodifiers_are_part_of_the_np_chunk():
    assert columns(
        "(NP (DT the) (ADJP (QP ($ $) (CD 2.29) (CD billion))) (NN value))") == [
        "the B-NP *", "$ I-NP *", "2.29 I-NP *", "billion I-NP *", "value I-NP *"]


def test_embedded_phrases_split_the_np():
    assert columns(
        "(NP (NP (DT a) (NN form)) (PP (IN of) (NP (NN asbestos))) (SBAR (WHNP (WDT that)) "
        "(S (VP (VBZ kills)))))") == [
        "a B-NP *", "form I-NP *", "of B-PP *", "asbestos B-NP *", "that B-NP (S*",
        "kills B-VP (S*S)S)"]


def test_coordinators_at_run_edges_and_a_lone_both_are_o():
    assert columns("(NP (NP (NNP Taiwan)) (CC and) (NP (NNP Korea)))") == [
        "Taiwan B-NP *", "and O *", "Korea B-NP *"]
    assert columns("(NP (DT both) (NP (NNS stocks)) (CC and) (NP (NNS bonds)))") == [
        "both O *", "stocks B-NP *", "and O *", "bonds B-NP *"]
    # inside a run a coordinator stays: one chunk
    assert columns("(NP (NN escrow) (CC and) (JJ record-keeping) (NNS rules))") == [
        "escrow B-NP *", "and I-NP *", "record-keeping I-NP *", "rules I-NP *"]


# --------------------------------------------------------------------------
# CHUNK column: VP


def test_the_verb_cluster_follows_the_vp_chain_through_a_subjectless_s():
    assert columns(
        "(S (NP-SBJ-1 (DT The) (NN company)) (VP (VBZ is) (ADVP (RB widely)) "
        "(VP (VBN expected) (S (NP-SBJ (-NONE- *-1)) (VP (TO to) (VP (VB take) "
        "(NP (PRP it))))))) (. .))") == [
        "The B-NP (S*", "company I-NP *", "is B-VP *", "widely I-VP *", "expected I-VP *",
        "to I-VP (S*", "take I-VP *", "it B-NP *S)", ". O *S)"]


def test_adverbs_after_the_last_verb():
    # bare: O (as in CoNLL-2000); an ADVP node: an ADVP chunk
    assert columns("(S (NP (PRP It)) (VP (VBZ is) (RB n't) (ADJP-PRD (JJ clear))) (. .))") == [
        "It B-NP (S*", "is B-VP *", "n't O *", "clear B-ADJP *", ". O *S)"]
    assert columns("(S (NP (NNS Prices)) (VP (VBD rose) (ADVP (RB sharply))))") == [
        "Prices B-NP (S*", "rose B-VP *", "sharply B-ADVP *S)"]


def test_an_adverb_before_a_subjectless_s_ends_the_cluster():
    assert columns(
        "(S (NP-SBJ-1 (NNP Time)) (VP (VBZ has) (ADVP (RB yet)) (S (NP-SBJ (-NONE- *-1)) "
        "(VP (TO to) (VP (VB announce))))))") == [
        "Time B-NP (S*", "has B-VP *", "yet B-ADVP *", "to B-VP (S*", "announce I-VP *S)S)"]


def test_coordinated_verbs_are_separate_chunks():
    assert columns("(VP (VB modify) (CC or) (VB discontinue) (NP (NN it)))") == [
        "modify B-VP *", "or O *", "discontinue B-VP *", "it B-NP *"]


# --------------------------------------------------------------------------
# CHUNK column: PP, SBAR, other phrases


def test_pp_preposition_merged_with_an_embedded_pps():
    assert columns("(PP (IN because) (PP (IN of) (NP (DT the) (NN rain))))") == [
        "because B-PP *", "of I-PP *", "the B-NP *", "rain I-NP *"]
    assert columns("(PP (VBG according) (PP (TO to) (NP (NNS analysts))))") == [
        "according B-PP *", "to I-PP *", "analysts B-NP *"]
    assert columns("(PP (JJ such) (IN as) (NP (NN crocidolite)))") == [
        "such B-PP *", "as I-PP *", "crocidolite B-NP *"]


def test_sbar_complementizer_and_wh_phrases():
    assert columns(
        "(SBAR (IN so) (IN that) (S (NP (PRP we)) (VP (MD can) (VP (VB go)))))") == [
        "so B-SBAR (S*", "that I-SBAR *", "we B-NP (S*", "can B-VP *", "go I-VP *S)S)"]
    assert columns(
        "(SBAR (WHADVP-1 (WRB when)) (S (NP (PRP it)) (VP (VBD fell) (ADVP (-NONE- *T*-1)))))") == [
        "when B-ADVP (S*", "it B-NP (S*", "fell B-VP *S)S)"]


def test_run_phrases_and_clause_level_words():
    assert columns(
        "(S (CC But) (NP (PRP he)) (ADVP (RB also)) (VP (VBD gave) (PRT (RP up)) "
        "(NP (PRP it))) (. .))") == [
        "But O (S*", "he B-NP *", "also B-ADVP *", "gave B-VP *", "up B-PRT *",
        "it B-NP *", ". O *S)"]
    assert columns("(NP (CONJP (RB rather) (IN than)) (NP (NNS bonds)))") == [
        "rather B-CONJP *", "than I-CONJP *", "bonds B-NP *"]


# --------------------------------------------------------------------------
# CHUNK column: rules the README leaves out (found by diffing against the
# reference files; each reproduces cases of the real data)


def test_adverbs_before_the_first_verb_join_the_cluster():
    assert columns("(VP (ADVP (RB clearly)) (VBP show) (NP (PRP it)))") == [
        "clearly B-VP *", "show I-VP *", "it B-NP *"]


def test_only_an_advp_of_adverbs_stays_in_the_cluster():
    assert columns("(VP (VBP are) (ADVP (DT both)) (VP (VBN produced)))") == [
        "are B-VP *", "both B-ADVP *", "produced B-VP *"]


def test_adjacent_trailing_advps_are_one_chunk():
    assert columns("(VP (VBD was) (ADVP (RB up)) (ADVP (RB only) (RB slightly)))") == [
        "was B-VP *", "up B-ADVP *", "only I-ADVP *", "slightly I-ADVP *"]


def test_a_word_after_the_first_phrase_of_an_sbar_or_pp_is_a_chunk_of_its_own():
    assert columns(
        "(SBAR (ADVP (RB even)) (IN though) (S (NP (PRP he)) (VP (VBZ has))))") == [
        "even B-ADVP (S*", "though B-PP *", "he B-NP (S*", "has B-VP *S)S)"]
    assert columns(
        "(PP (CC but) (ADVP (RB probably)) (RB not) (PP (IN until) (NP (NN May))))") == [
        "but B-PP *", "probably B-ADVP *", "not B-ADVP *", "until B-PP *", "May B-NP *"]


def test_stray_words_of_a_vp_or_a_clause_are_typed_by_their_pos():
    assert columns("(S (NP (NNP Magna)) (VP (JJ resigned)))") == [
        "Magna B-NP (S*", "resigned B-ADJP *S)"]
    assert columns("(X (NNP Money) (NNP Market) (CD 6.21) (NN %))") == [
        "Money B-NP *", "Market B-NP *", "6.21 B-NP *", "% B-NP *"]


def test_punctuation_splits_a_complementizer():
    assert columns("(SBAR (VBN Provided) (, ,) (IN that) (S (NP (NNS funds)) (VP (VBP exist))))") == [
        "Provided B-SBAR (S*", ", O *", "that B-SBAR *", "funds B-NP (S*", "exist B-VP *S)S)"]


def test_a_lone_both_after_phrases_is_o_too():
    assert columns("(NP (NP (PRP he)) (CC and) (NP (PRP she)) (DT both))") == [
        "he B-NP *", "and O *", "she B-NP *", "both O *"]


# --------------------------------------------------------------------------
# the files


def test_clauses_writes_the_three_splits(tmp_path):
    tree = "( (S (NP-SBJ (PRP It)) (VP (VBD rose)) (. .) ))\n"
    upstream = make_zip(tmp_path / "treebank.zip", {
        "treebank/combined/README": "not a tree\n",
        "treebank/combined/wsj_0170.mrg": tree,
        "treebank/combined/wsj_0002.mrg": "( (NP (NNS Stocks) ))\n",
        "treebank/combined/wsj_0001.mrg": tree + "( (FRAG (NP (-NONE- *)) (NP (NN Yes) )))\n",
        "treebank/parsed/wsj_0001.prd": tree,
        "treebank/combined/wsj_0199.mrg": tree,
    })
    wsj.clauses(upstream, tmp_path / "out")
    rose = "It PRP B-NP (S*\nrose VBD B-VP *\n. . O *S)\n\n"
    assert (tmp_path / "out/train.txt").read_text() == (
        rose + "Yes NN B-NP *\n\n" + "Stocks NNS B-NP *\n\n")
    assert (tmp_path / "out/dev.txt").read_text() == rose
    assert (tmp_path / "out/test.txt").read_text() == rose


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "benchmarks.derive.wsj", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True)


def test_command_line(tmp_path):
    upstream = make_zip(tmp_path / "d.zip", {"dependency_treebank/wsj_0001.dp": "Hi\tUH\t0\n"})
    done = run_cli("dependencies", str(upstream), str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out/train.conll").read_text() == "1\tHi\t_\tUH\tUH\t_\t0\tROOT\t_\t_\n\n"
    missing = run_cli("clauses", str(tmp_path / "missing.zip"), str(tmp_path / "out"))
    assert missing.returncode == 2
    assert len(missing.stderr.strip().split("\n")) == 1 and "missing.zip" in missing.stderr
