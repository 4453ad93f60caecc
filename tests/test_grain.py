"""The grain is one type (issue 46 item 3): each of doc, page, chunk and evidence parses from its word
and names itself back, reads a question's labels and matches hits; no grain word is compared with
`by` or `grain` anywhere else in the package; the public functions still take the words."""
from __future__ import annotations

import ast
import pickle

import pytest

from tests.conftest import ROOT
from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question
from vectrixdb.evaluation.golden.grain import CHUNK, DOC, EVIDENCE, GRAINS, PAGE, Grain, grain_of
from vectrixdb.evaluation.golden.labels import Result

PACKAGE = ROOT / "vectrixdb"
WORDS = {"doc", "page", "chunk", "evidence"}
NAMES = {"by", "grain"}  # the names a grain travels under


def _named(node: ast.AST) -> bool:
    """`by`, `grain`, `x.by`, `x["by"]` or `x.get("by")`."""
    if isinstance(node, ast.Name):
        return node.id in NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in NAMES
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in NAMES
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value in NAMES
    return False


def _word(node: ast.AST) -> bool:
    """A grain word, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in WORDS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_word(e) for e in node.elts)
    return False


def comparisons(source: str) -> list[int]:
    """The lines where a grain word is compared (==, !=, in, not in) with a by/grain value."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Compare)
            and any(_named(side) for side in (node.left, *node.comparators))
            and any(_word(side) for side in (node.left, *node.comparators))]


def test_every_grain_parses_from_its_word_and_names_itself_back():
    assert [g.name for g in GRAINS] == ["doc", "page", "chunk", "evidence"]
    for grain in GRAINS:
        assert Grain.of(grain.name) is grain and Grain.of(grain) is grain
        assert str(grain) == grain.name and f"{grain}" == grain.name
        assert pickle.loads(pickle.dumps(grain)) == grain  # a cell sent to another process keeps its grain
    assert (DOC, PAGE, CHUNK, EVIDENCE) == GRAINS


def test_an_unknown_word_is_refused_naming_the_choices():
    with pytest.raises(BadInput, match=r"unknown grain by='sentence'; choose one of doc, page, chunk, evidence"):
        Grain.of("sentence")
    with pytest.raises(BadInput, match=r"pool judges doc, page, chunk; not by='evidence'"):
        Grain.of("evidence", (DOC, PAGE, CHUNK), who="pool judges")
    with pytest.raises(BadInput, match=r"not by='chunk'"):
        Grain.of(CHUNK, (PAGE, DOC), who="answer_cutoff judges a top result by")
    with pytest.raises(BadInput):
        Grain.of("Page")  # the word as the CLI and the API take it, exactly


def test_no_grain_word_is_compared_outside_the_grain_module():
    assert comparisons("if by == 'page':\n    pass") == [1]  # the check finds what it is for
    assert comparisons("x = run['by'] in ('doc', 'chunk')\ny = grain != 'evidence'") == [1, 2]
    assert comparisons("if level == 'page' or by == 'code':\n    pass") == []  # other meanings of the words
    found = [f"{path.relative_to(ROOT)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.name != "grain.py" for line in comparisons(path.read_text(encoding="utf-8"))]
    assert not found, ("a grain word compared outside evaluation/golden/grain.py; ask the Grain instead "
                       "(Grain.of(word), then a method or attribute): " + ", ".join(found))


def hit(chunk_id: str, doc_id: str, pages: tuple[int, ...] = (), text: str = "") -> Result:
    return Result(chunk_id, doc_id, pages, text, 1.0)


HITS = [hit("a::0", "a.pdf", (2, 3), "Revenue grew 10% in 2021."), hit("b::4", "b.pdf", (7,), "Staff: 29,300."),
        hit("a::1", "a.pdf", (5,), "Trips recovered.")]


def test_doc_grain_reads_documents_and_matches_a_hit_by_its_document():
    q = Question("q?", None, {"a.pdf#page=3": 1, "b.pdf#page=9": 0, "c.pdf": 0}, "q")
    assert DOC.qrel(q) == {"a.pdf": 1.0, "c.pdf": 0.0}  # a page judged wrong says nothing of its document
    assert DOC.units(q, HITS) == ["a.pdf", "b.pdf"]  # each document once, at its best rank
    assert DOC.labels_of(HITS[0]) == ["a.pdf"] and DOC.ids(HITS) == ["a.pdf", "b.pdf"]
    assert DOC.answers(["a.pdf#page=9"], HITS[0]) and not DOC.answers(["b.pdf"], HITS[0])
    assert DOC.search_depth(10) == 30 and DOC.chunks_read(HITS, 1) == HITS[:1]  # up to the 2nd new document
    assert DOC.names_documents and not (DOC.names_pages or DOC.names_chunks or DOC.names_quotes)


def test_page_grain_reads_pages_and_matches_every_page_a_hit_covers():
    q = Question("q?", None, ["a.pdf#page=3", "b.pdf", "b.pdf#page=7"], "q")
    assert PAGE.qrel(q) == {"a.pdf#page=3": 1.0, "b.pdf": 1.0}  # b.pdf is expected whole: its page adds nothing
    assert PAGE.units(q, HITS) == [("a.pdf#page=2", "a.pdf#page=3"), ("b.pdf", "b.pdf#page=7"), ("a.pdf#page=5",)]
    assert PAGE.labels_of(HITS[0]) == ["a.pdf#page=2", "a.pdf#page=3"]
    assert PAGE.answers(["a.pdf#page=3"], HITS[0]) and not PAGE.answers(["a.pdf#page=4"], HITS[0])
    assert PAGE.answers(["b.pdf"], HITS[1])  # a whole-document label: any page of it
    judged = PAGE.judges(Question("q?", None, {"a.pdf": 1, "b.pdf#page=1": 0}, "j"))
    assert judged("a.pdf#page=9") and judged("b.pdf#page=1") and not judged("b.pdf#page=7")
    assert PAGE.pools("page") and PAGE.pools("chunk") and not PAGE.pools("doc") and DOC.pools("doc")
    assert PAGE.search_depth(10) == 10 and PAGE.names_pages


def test_chunk_grain_reads_chunk_ids_and_matches_a_hit_by_its_chunk_id():
    q = Question("q?", None, ["a.pdf#page=5", "a::1"], "q")
    assert CHUNK.qrel(q) == {"a::1": 1.0}  # a row naming chunks is judged by them alone
    assert PAGE.qrel(q) == {"a.pdf#page=5": 1.0}  # and by its pages at page grain
    assert CHUNK.units(q, HITS) == ["a::0", "b::4", "a::1"] and CHUNK.labels_of(HITS[1]) == ["b::4"]
    assert CHUNK.id_of(HITS[1]) == "b::4" and PAGE.id_of(HITS[1]) == "b.pdf"
    assert CHUNK.names_chunks and CHUNK.label_warnings([Question("q?", None, ["a.pdf"], "q")])


def test_evidence_grain_matches_the_quotes_a_hit_holds_and_falls_back_to_pages():
    q = Question("q?", None, ["a.pdf#page=5"], "q", evidence=["trips recovered", "Staff: 29,300"])
    assert EVIDENCE.at(q) is EVIDENCE and EVIDENCE.qrel(q) == {"trips recovered": 1.0, "staff: 29,300": 1.0}
    assert EVIDENCE.units(q, HITS) == [(), ("staff: 29,300",), ("trips recovered",)]
    bare = Question("q?", None, ["a.pdf#page=5"], "b")
    assert EVIDENCE.at(bare) is PAGE and EVIDENCE.units(bare, HITS) == PAGE.units(bare, HITS)
    assert EVIDENCE.label_warnings([bare]) == ["by='evidence' but no row has evidence: every row is judged by its "
                                               "pages instead"]
    with pytest.raises(BadInput):
        EVIDENCE.labels_of(HITS[0])  # a quote names no hit


def test_grain_of_reads_the_grain_the_labels_ask_for():
    assert grain_of([Question("q?", None, ["a.pdf#page=2"], "q")])[0] is PAGE
    assert grain_of([Question("q?", None, ["a::0"], "q")])[0] is CHUNK
    assert grain_of([Question("q?", None, ["a.pdf"], "q")])[0] is DOC


def test_the_public_functions_take_the_words_and_record_them():
    from vectrixdb.evaluation import retrieval_report
    from vectrixdb.evaluation.retrieval.pooling import pool

    q = Question("q?", None, ["a.pdf#page=3"], "q")
    words = retrieval_report(lambda query: HITS, [q], k=1, by="page")
    typed = retrieval_report(lambda query: HITS, [q], k=1, by=PAGE)
    assert words["by"] == typed["by"] == "page" and words["recall"] == typed["recall"] == {1: 1.0}
    assert isinstance(words["by"], str) and type(words["by"]) is str  # a saved report.json holds the word
    assert pool({"run": {"q": ["a::0", "b::4"]}}, [q], by="doc")["by"] == "doc"
