"""audit_golden: how synthetic a question set is, beside real questions."""
from __future__ import annotations

import pytest

from vectrixdb.evaluation.writing.audit import audit_golden, kind_of, overlap
from vectrixdb.evaluation.golden.questions import Question, save_questions
from vectrixdb.evaluation.runs.report import load_report


def test_overlap_is_the_share_of_the_questions_words_in_its_evidence():
    # content words: customers, defer, loan, payments, after, flood (can, a are stop words); 4 are in the quote
    q = "Can customers defer loan payments after a flood?"
    assert overlap(q, ("customers in disaster areas can defer loan payments with no late fees",)) == pytest.approx(0.6667)
    assert overlap(q, ()) is None


@pytest.mark.parametrize("question, kind", [
    ("loan deferment late fees", "search"),
    ("How do I report a stolen card?", "how_why"),
    ("Why are late fees waived?", "how_why"),
    ("What is the most a borrower may overpay?", "fact"),
    ("I lost my home in the wildfire last month and my savings are gone, so can I put my loan payments off for "
     "a while?", "long"),
])
def test_kinds_are_read_from_the_questions_form(question, kind):
    assert kind_of(Question(question, expected=("x",))) == kind


DRAFTED = [
    Question("Can customers in disaster areas defer loan payments with no late fees?", "Yes.", ("deferment",), "d1",
             ("customers in disaster areas can defer loan payments with no late fees",), draft=True),
    Question("How much may borrowers overpay of the balance a year without penalty?", "10%.", ("mortgage",), "d2",
             ("Borrowers may overpay up to 10% of the balance a year without penalty",), draft=True),
]
REAL = [
    Question("My house burned down, do I still have to pay my loan this month?", "No, it can be deferred.",
             ("deferment",), "r1"),
    Question("someone used my credit card", "Report it.", ("card-fraud",), "r2"),
]


def test_the_audit_sets_drafts_beside_real_questions(policies, tmp_path):
    drafted, real = str(tmp_path / "drafts.jsonl"), str(tmp_path / "real.jsonl")
    save_questions(DRAFTED, drafted)
    save_questions(REAL, real)
    report = audit_golden(drafted, policies, real=real)
    d, r = report["sets"]["drafted"], report["sets"]["real"]
    assert (d["questions"], r["questions"], report["questions"]) == (2, 2, 4)
    assert d["keyword_at_1"] == 1.0 and d["dense_at_1"] == 1.0        # a drafted question is its passage's echo
    assert d["overlap_median"] == pytest.approx(1.0, abs=0.15) and r["overlap_median"] is None
    assert d["coverage"]["documents"] == [2, 4] and r["coverage"]["documents"] == [2, 4]
    assert d["words_median"] == 12 and d["lengths"]["11-15"] == 2
    assert report["gap"]["keyword_at_1"] == pytest.approx(d["keyword_at_1"] - r["keyword_at_1"])
    assert "real: no row has evidence" in report["warnings"][0]
    frame = report.frame
    assert list(frame.index.get_level_values("set")) == ["drafted", "drafted", "real", "real"]
    assert frame.loc[("drafted", "d1"), "keyword_rank"] == 1
    run = report.save(str(tmp_path / "runs"))
    again = load_report(str(tmp_path / "runs" / "audits" / "runs" / run / "report.json"))
    assert again["sets"] == report["sets"] and again.kind == "golden_audit"
    import matplotlib

    matplotlib.use("Agg")
    fig = report.plot()
    assert len(fig.axes) == 4 and fig.get_suptitle() == "golden set audit: drafted against real"
    lengths, overlaps = fig.axes[:2]
    assert [t.get_text() for t in lengths.get_legend().get_texts()] == ["drafted (n=2)", "real (n=2)"]
    assert [t.get_text() for t in overlaps.get_legend().get_texts()] == ["drafted (n=2)"]  # real rows have no evidence
    fig.savefig(tmp_path / "audit.png")


def test_a_question_needing_two_pages_is_two_place(db):
    db.add_document("Rule one: members may bring two guests on weekdays.\fRule two: guests pay a fee of five pounds "
                    "at the desk.", doc_id="club")
    q = Question("What do two weekday guests pay?", expected=("club#page=1", "club#page=2"),
                 evidence=("members may bring two guests", "guests pay a fee of five pounds"))
    from vectrixdb.evaluation.writing.audit import _Layout

    assert kind_of(q, _Layout(db)) == "two_place"
    same = Question("What do two weekday guests pay?", expected=("club#page=2",),
                    evidence=("guests pay a fee", "five pounds at the desk"))
    assert kind_of(same, _Layout(db)) == "fact"


def test_a_set_can_be_audited_alone_under_its_own_name(policies):
    report = audit_golden(REAL, policies, names=("hand-written", "real"))
    assert list(report["sets"]) == ["hand-written"] and "gap" not in report
    assert report["sets"]["hand-written"]["questions"] == 2
    assert report["sets"]["hand-written"]["kinds"]["search"] == 0.5   # "someone used my credit card"
