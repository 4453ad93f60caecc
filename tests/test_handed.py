"""What each build of a chunking comparison handed over, kept in its run (evaluation/chunking/handed.py,
issue 50.4): references and each handed character once, read back passage by passage with the
evidence marked where it was found."""
from __future__ import annotations

import pytest

from vectrixdb.evaluation import Question
from vectrixdb.evaluation.chunking.handed import passages, read_spans, record, spans_text
from vectrixdb.evaluation.golden.labels import folded, normal
from vectrixdb.evaluation.runs.saved import check_head
from vectrixdb.reading.document import Document, Page


@pytest.mark.parametrize("text", ["  **Straße** and_Δ  ΣΑΣ\n> a quote | x ", "plain", "", "***", "a\u00a0b\tc\n\nd#",
                                  "ﬁne ŉ İstanbul"])
def test_folded_is_normal_with_the_offset_each_character_came_from(text):
    out, origin = folded(text)
    assert out == normal(text) and len(origin) == len(out)
    assert origin == sorted(origin)
    for c, i in zip(out, origin):  # a folded letter comes from the character it folds
        assert c == " " or c in text[i].casefold()


MD = "# Cards\n\nA charge can be disputed for up to **120 days** after the statement date.\n\nFees apply."
#     page 1 ends after "statement" ...                       page 2 from " date." on
SPLIT = MD.index(" date.")
DOC = Document("cards.md", MD, (Page(1, 0, SPLIT), Page(2, SPLIT, len(MD))))
QUOTE = "disputed for up to 120 days after the statement date"
Q = Question("How long to dispute?", None, ["cards.md"], "q1", evidence=[QUOTE])
P = Question("Fees?", None, ["cards.md#page=2"], "q2")


def _spans(quote_cut: int) -> list[tuple[int, int, int]]:
    """Two chunks that cut the quote at `quote_cut`, best first, as a build hands them over."""
    return [(0, quote_cut, len(MD)), (0, 0, quote_cut)]


def test_a_record_keeps_references_and_each_character_once_and_reads_back_the_passages():
    cut = MD.index("120")
    handed = {"a/100/plain": [_spans(cut), [(0, SPLIT, len(MD))]],
              "a/100/heading": [_spans(cut), []],  # the same chunks again: stored once
              "b/50/plain": [[(0, 0, 20)], [(0, 0, 20)]]}
    found = {"a/100/plain": [True, True], "a/100/heading": [True, False], "b/50/plain": [False, False]}
    kept = record(handed, found, [(Q, "default"), (P, "default")], {"default": [DOC]})
    assert kept["documents"] == [["default", "cards.md"]] and kept["questions"] == ["q1", "q2"]
    assert "".join(t["text"] for t in kept["texts"]) == MD  # the union, once, cut where page 2 starts
    assert [(t["start"], t["page"]) for t in kept["texts"]] == [(0, 1), (SPLIT, 2)]
    assert kept["builds"]["a/100/plain"][0]["handed"] == f"0:{cut}-{len(MD)} 0:0-{cut}"
    got = passages(kept, "a/100/plain", "q1")
    assert [p["start"] for p in got] == [cut, 0] and [p["pages"] for p in got] == [[1, 2], [1]]
    assert ["".join(x["text"] for x in p["parts"]) for p in got] == [MD[cut:], MD[:cut]]
    marked = [x["text"] for p in got for x in p["parts"] if x["evidence"]]
    assert marked == [MD[cut:MD.index(" date.") + 5], MD[MD.index("disputed"):cut]]  # the quote, cut in two
    assert normal(marked[1] + marked[0]) == normal(QUOTE) and all(p["evidence"] for p in got)
    on_page = passages(kept, "a/100/plain", "q2")  # no evidence: the handed text on the expected page
    assert [x["text"] for x in on_page[0]["parts"] if x["evidence"]] == [MD[SPLIT:]]
    assert passages(kept, "a/100/heading", "q2") == []  # handed nothing
    missed = passages(kept, "b/50/plain", "q1")
    assert missed[0]["parts"] == [{"text": MD[:20], "evidence": False}] and not missed[0]["evidence"]
    assert passages(kept, "b/50/plain", "nobody") is None and passages(None, "b/50/plain", "q1") is None


def test_spans_read_back_and_a_bad_record_is_refused_where_it_is_read():
    spans = [(0, 12, 300), (3, 0, 9)]
    assert read_spans(spans_text(spans)) == spans and read_spans("") == [] and read_spans(None) == []
    good = {"kind": "chunking", "values": {"handed": {"documents": [["default", "d"]], "questions": ["q"],
                                                      "texts": [{"document": 0, "start": 0, "page": 1, "text": "x"}],
                                                      "builds": {"a/1/plain": [{"handed": "0:0-1", "evidence": ""}]}}}}
    assert check_head(good) is None
    good["values"]["handed"]["builds"]["a/1/plain"][0]["handed"] = "from 0 to 1"
    assert check_head(good).startswith("at /values/handed/builds/a~11~1plain/0/handed: str \"from 0 to 1\"")
