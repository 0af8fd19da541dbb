"""benchmarks.derive.jnlpba on small hand-worked standoff documents.

Each expectation is written by hand from the rules in shared/data/README.md
("How train.iob2 was reconstructed"); no upstream or shared data is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.derive import jnlpba


def write_doc(folder: Path, name: str, text: str, entities: list[tuple[str, str]]) -> None:
    """A standoff pair; entities as (type, surface), found left to right."""
    lines, pos = [], 0
    for number, (label, surface) in enumerate(entities, 1):
        start = text.index(surface, pos)
        pos = start + len(surface)
        lines.append(f"T{number}\t{label} {start} {pos}\t{surface}\n")
    (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    (folder / f"{name}.ann").write_text("".join(lines), encoding="utf-8")


def convert(tmp_path: Path, text: str, entities: list[tuple[str, str]] = ()) -> list[list[str]]:
    """Sentences of `token TAB tag` lines for one document."""
    folder = tmp_path / "standoff"
    folder.mkdir()
    write_doc(folder, "1", text, list(entities))
    out = tmp_path / "train.iob2"
    jnlpba.train(folder, out)
    raw = out.read_text(encoding="utf-8")
    assert raw.endswith("\n\n")
    return [block.split("\n") for block in raw[:-2].split("\n\n")]


def words(sentences: list[list[str]]) -> list[str]:
    """Each sentence as its tokens joined by single spaces."""
    return [" ".join(line.split("\t")[0] for line in s) for s in sentences]


@pytest.mark.parametrize(
    "text, expected",
    [
        # always-split characters, also inside words
        ("Title\n1,25(OH)2D3 at 50% [p<0.05; n=3]: yes? no!",
         ["1 , 25 ( OH ) 2D3 at 50 % [ p < 0.05 ; n=3 ] : yes ? no !"]),
        # dash runs split, single hyphens and slashes stay inside words
        ("Title\nIL-2 -- and CD4+/CD8+ cells---here",
         ["IL-2 -- and CD4+/CD8+ cells --- here"]),
        ("Title\nT & B cells", ["T & B cells"]),
    ],
)
def test_punctuation_splitting(tmp_path, text, expected):
    assert words(convert(tmp_path, text))[1:] == expected


def test_abbreviation_periods_stay(tmp_path):
    text = "Title\nSome cells, e.g. B cells, i.e. all vs. none (Dr. X and Li et al. cf. ca. 5)."
    assert words(convert(tmp_path, text))[1:] == [
        "Some cells , e.g. B cells , i.e. all vs. none ( Dr. X and Li et al. cf. ca. 5 ) ."
    ]


def test_dotted_abbreviation_and_initials(tmp_path):
    text = (
        "Title\n"
        "Given p.o. daily by M. tuberculosis (Li, B. L., and T. R. Smith) with S.E.M. shown. "
        "Made by B.V. All agreed."
    )
    # an initial or `B.V.` before a capitalised word: a sentence period
    assert words(convert(tmp_path, text))[1:] == [
        "Given p.o. daily by M. tuberculosis ( Li , B. L. , and T. R .",
        "Smith ) with S.E.M. shown .",
        "Made by B.V .",
        "All agreed .",
    ]


def test_journal_abbreviations_in_citations(tmp_path):
    text = "Title\nAs shown (Mol. Cell. Biol. 15, 1-9; Blood. 2001;98) and in J. Virol. 65 (1991) here."
    assert words(convert(tmp_path, text))[1:] == [
        # `J.` before a capitalised word and `Virol.` before a bare number
        # are sentence periods
        "As shown ( Mol. Cell. Biol. 15 , 1-9 ; Blood. 2001 ; 98 ) and in J .",
        "Virol .",
        "65 ( 1991 ) here .",
    ]


def test_initial_after_year_in_citation(tmp_path):
    text = "Title\nSee Smith (1996) J. Steroid Biochem. Mol. Biol. 57, 43-50."
    assert words(convert(tmp_path, text))[1:] == [
        "See Smith ( 1996 ) J. Steroid Biochem. Mol. Biol. 57 , 43-50 ."
    ]


def test_glued_sentence_period(tmp_path):
    text = "Title\nin cells.Patient data by MB.Moreover the CD3.TcR of (J.Jhan) cells."
    assert words(convert(tmp_path, text))[1:] == [
        "in cells .",
        "Patient data by MB .",
        # not after a digit or a lone initial
        "Moreover the CD3.TcR of ( J.Jhan ) cells .",
    ]


def test_clitics_and_quotes(tmp_path):
    text = (
        "Title\n"
        "Crohn's 5' end can't and cannot bind 5'-ACGT-3'. "
        "It was termed \"A/R tolerance.\" The \"rel\" gene's 'late' form."
    )
    assert words(convert(tmp_path, text))[1:] == [
        "Crohn 's 5 ' end ca n't and can not bind 5'-ACGT-3' .",
        "It was termed `` A/R tolerance. ''",
        "The `` rel '' gene 's 'late ' form .",
    ]


def test_entity_boundary_splitting_and_tags(tmp_path):
    text = "Title\nIL-2-induced NF-kappa B activity in T cells."
    sentences = convert(
        tmp_path, text,
        [("protein", "IL-2"), ("protein", "NF-kappa B"), ("cell_type", "T cells")],
    )
    assert sentences[1] == [
        "IL-2\tB-protein",
        "-induced\tO",
        "NF-kappa\tB-protein",
        "B\tI-protein",
        "activity\tO",
        "in\tO",
        "T\tB-cell_type",
        "cells\tI-cell_type",
        ".\tO",
    ]


def test_period_cut_by_entities_does_not_end_a_sentence(tmp_path):
    # `B.I` is one token by the rules; only the entity boundaries cut the `.`
    text = "Title\nthe NF-kappa B.I kappa B complex. Next one."
    sentences = convert(
        tmp_path, text, [("protein", "NF-kappa B"), ("protein", "I kappa B complex")]
    )
    assert words(sentences)[1:] == [
        "the NF-kappa B . I kappa B complex .",
        "Next one .",
    ]


def test_period_cut_off_by_an_entity_before_a_closing_quote(tmp_path):
    text = 'Title\nthe "death domain." Another domain.'
    sentences = convert(tmp_path, text, [("protein", "death domain")])
    assert words(sentences)[1:] == ["the `` death domain .", "'' Another domain ."]


def test_entity_crossing_a_sentence_boundary_merges(tmp_path):
    # `C.` before a capitalised word is a sentence period, but the entity
    # `C. Sub.` spans it; `Sub.` before a lower-case word is one too (as in
    # the original data)
    text = "Title\nthe effect of C. Sub. on Ca2+ transport."
    sentences = convert(tmp_path, text, [("protein", "C. Sub.")])
    assert words(sentences)[1:] == ["the effect of C . Sub .", "on Ca2+ transport ."]
    assert sentences[1][3:] == [
        "C\tB-protein", ".\tI-protein", "Sub\tI-protein", ".\tI-protein"
    ]


def test_sentences_per_line_and_heading_join(tmp_path):
    text = "A title.\nBACKGROUND:\nFirst one. Second one.\nMETHODS AND RESULTS:\nThird."
    assert words(convert(tmp_path, text)) == [
        "A title .",
        "BACKGROUND : First one .",
        "Second one .",
        "METHODS AND RESULTS : Third .",
    ]


@pytest.mark.parametrize(
    "title, expected",
    [
        ("[Studies of T cells].", "[ Studies of T cells ]"),
        ("T cells. [see comments]", "T cells [ see comments ]"),
        ("T cells. [published erratum appears in Proc Natl Acad Sci USA 1993; 90:1]",
         "T cells [ published erratum appears in Proc Natl Acad Sci U S A 1993 ; 90 : 1 ]"),
        # the `.` stays (and ends the sentence) before a wider gap
        ("T cells.  [see comments]", "T cells .|[ see comments ]"),
    ],
)
def test_title_conventions(tmp_path, title, expected):
    assert "|".join(words(convert(tmp_path, title + "\nBody."))[:-1]) == expected


def test_documents_in_string_order_of_base_names(tmp_path):
    folder = tmp_path / "standoff"
    folder.mkdir()
    for name in ("97218353-2", "97218353", "9721835"):
        write_doc(folder, name, f"Doc {name}.", [])
    out = tmp_path / "train.iob2"
    jnlpba.train(folder, out)
    firsts = [block.split("\n")[1] for block in out.read_text().split("\n\n") if block]
    assert firsts == ["9721835\tO", "97218353\tO", "97218353-2\tO"]


def test_cli_writes_file_and_md5(tmp_path, capsys):
    folder = tmp_path / "standoff"
    folder.mkdir()
    write_doc(folder, "1", "A title.", [])
    out = tmp_path / "train.iob2"
    assert jnlpba.main([str(folder), str(out)]) == 0
    assert out.read_text() == "A\tO\ntitle\tO\n.\tO\n\n"
    assert "md5 " in capsys.readouterr().out


def test_cli_missing_input_exits_2(tmp_path, capsys):
    assert jnlpba.main([str(tmp_path / "absent"), str(tmp_path / "out")]) == 2
    folder = tmp_path / "standoff"
    folder.mkdir()
    (folder / "1.txt").write_text("A title.")
    assert jnlpba.main([str(folder), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: missing input") for line in err)
