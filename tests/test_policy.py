"""Principals and their views: a view behaves exactly like a collection holding only what the
principal may see (search in every mode, similar, info, documents, document and the evaluation
verbs), and it is a boundary: nothing of the collection or the principal is reachable from it."""
import hashlib
import math
import re
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vectrixdb import Vectrix
from vectrixdb.errors import BadInput
from vectrixdb.policy import check_access, visible

SECRET = "Board minutes: the merger with Northwind closes in March; layoffs of 200 staff are planned."


class HashEmbedder:
    """A deterministic stand-in model: a text is the normalised sum of one fixed random vector per
    word, so texts sharing words are near and every process gets the same vectors, instantly."""

    name, dim = "test-hash-words-32", 32

    def encode(self, texts, *, progress=False):
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
                out[i] += np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            if not out[i].any():
                out[i, 0] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_visible_rules():
    assert visible({}, {"group": ["x"]})
    assert visible({"group": ["hr"]}, {"group": ["hr", "it"]})
    assert not visible({"group": ["hr"]}, {"group": ["it"]})
    assert not visible({"group": ["hr"], "region": ["eu"]}, {"group": ["hr"]})
    assert visible({"group": ["hr"]}, None)  # the owner's own view


def test_access_values_are_checked():
    assert check_access({"group": "hr"}) == {"group": ["hr"]}
    assert check_access({"group": ["b", "a", "a"]}) == {"group": ["a", "b"]}
    assert check_access({"group": []}) == {"group": []}
    assert check_access(None) == {}
    for bad in ({"group": None}, {"group": ["a", None]}, {"": ["a"]}, ["group"], {1: "a"}):
        with pytest.raises(BadInput):
            check_access(bad)


def _build(db):
    db.add_document(SECRET, doc_id="board", access={"group": ["board"]})
    db.add_document("Public notice: branch hours change in March.", doc_id="notice")
    db.add_document("Staff handbook: holidays and sick leave.", doc_id="handbook", access={"group": ["staff", "board"]})
    db.add_document("Sealed: nobody may read this merger note.", doc_id="sealed", access={"group": []})
    return db


@pytest.fixture
def small(tmp_path):
    return _build(Vectrix("small", path=tmp_path, model=HashEmbedder()))


def test_restricted_document_never_appears(db):
    _build(db)
    staff = db.as_principal({"group": "staff"})
    outsider = db.as_principal({"group": "visitor"})

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.one_of(st.just(SECRET), st.just("merger Northwind layoffs board minutes"),
                     st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1).filter(str.strip)))
    def check(query):
        for mode in ("dense", "keyword", "hybrid"):
            assert {h.doc_id for h in staff.search(query, 10, mode=mode)} <= {"notice", "handbook"}
            assert {h.doc_id for h in outsider.search(query, 10, mode=mode)} <= {"notice"}
        assert {h.doc_id for h in staff.similar(query, 10)} <= {"notice", "handbook"}

    check()
    assert db.search(SECRET, 1)[0].doc_id == "board"  # the owner still finds it
    assert db.as_principal({"group": "board"}).search(SECRET, 1)[0].doc_id == "board"


def test_an_empty_value_list_means_nobody_and_no_attributes_mean_public(small):
    everyone = {"group": ["board", "staff", "visitor"]}
    assert "sealed" not in {d["doc_id"] for d in small.as_principal(everyone).documents()}
    assert "sealed" in {d["doc_id"] for d in small.documents()}  # the owner sees it
    assert [d["doc_id"] for d in small.as_principal({}).documents()] == ["notice"]
    assert [d["doc_id"] for d in small.as_principal({"group": []}).documents()] == ["notice"]
    assert [d["doc_id"] for d in small.as_principal({"region": "eu"}).documents()] == ["notice"]


def test_the_view_is_a_boundary(small):
    staff = small.as_principal({"group": "staff"})
    for name in ("db", "principal", "catalog", "folder", "_PrincipalView_db", "__dict__", "add_document"):
        assert not hasattr(staff, name), name
    before = [h.to_dict() for h in staff.search("merger minutes", 10, mode="hybrid")]
    for name, value in (("db", small), ("principal", {"group": ["board"]}), ("_PrincipalView__principal", None)):
        with pytest.raises(AttributeError):
            setattr(staff, name, value)
    assert [h.to_dict() for h in staff.search("merger minutes", 10, mode="hybrid")] == before
    assert "board" not in {d["doc_id"] for d in staff.documents()}
    staff.documents()[0]["access"]["group"] = ["everyone"]  # a copy: the collection is unchanged
    assert small.documents()[0]["access"] != {"group": ["everyone"]}
    assert staff.document("board") is None and staff.document("handbook").doc_id == "handbook"
    assert staff.info()["documents"] == 2 and "path" not in staff.info() and "generation" not in staff.info()


def test_similar_to_a_hidden_chunk_is_taken_as_text(small, tmp_path):
    hidden = small.search(SECRET, 1)[0].chunk_id
    staff = small.as_principal({"group": "staff"})
    got = [h.to_dict() for h in staff.similar(hidden, 3)]  # no error that would say it exists
    fresh = Vectrix("small", path=tmp_path / "fresh", model=HashEmbedder())
    fresh.add_documents([{"source": "Public notice: branch hours change in March.", "doc_id": "notice"},
                         {"source": "Staff handbook: holidays and sick leave.", "doc_id": "handbook",
                          "access": {"group": ["staff", "board"]}}], progress=False)
    assert got == [h.to_dict() for h in fresh.similar(hidden, 3)]


def test_keyword_scores_do_not_count_hidden_documents(tmp_path):
    """IDF over all documents would reveal how often hidden ones use a word."""
    def score(hidden_copies: int) -> float:
        db = Vectrix("idf", path=tmp_path / str(hidden_copies), model=HashEmbedder())
        db.add_documents([{"source": "merger talks today", "doc_id": "open"},
                          {"source": "branch opening hours", "doc_id": "other"}]
                         + [{"source": f"merger merger plan {i}", "doc_id": f"h{i}", "access": {"group": ["board"]}}
                            for i in range(hidden_copies)], progress=False)
        return db.as_principal({"group": "staff"}).search("merger", 1, mode="keyword")[0].score

    assert score(0) == pytest.approx(score(5), abs=1e-6)


# --- the equivalence property -------------------------------------------------------------------

WORDS = ["loan", "defer", "payment", "fraud", "card", "merger", "staff", "branch", "fee", "mortgage", "fund", "rate"]
GROUPS = ["a", "b", "c"]

docs_strategy = st.lists(
    st.fixed_dictionaries({
        "text": st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join),
        "year": st.sampled_from([None, 2020, 2021]),
        "access": st.one_of(st.none(), st.fixed_dictionaries({"group": st.lists(st.sampled_from(GROUPS), max_size=2)}),
                            st.fixed_dictionaries({"group": st.lists(st.sampled_from(GROUPS), min_size=1, max_size=2),
                                                   "region": st.sampled_from([["eu"], ["us"], ["eu", "us"]])})),
    }),
    min_size=1, max_size=6)
principal_strategy = st.one_of(
    st.fixed_dictionaries({"group": st.lists(st.sampled_from(GROUPS), max_size=3)}),
    st.fixed_dictionaries({"group": st.lists(st.sampled_from(GROUPS), min_size=1, max_size=2),
                           "region": st.sampled_from(["eu", "us"])}))


def _items(docs):
    items = []
    for i, d in enumerate(docs):
        item = {"source": d["text"], "doc_id": f"doc{i}", "access": d["access"]}
        if d["year"] is not None:
            item["metadata"] = {"year": d["year"]}
        items.append(item)
    return items


def _same_hits(got, want):
    """Same hits in the same order with the same scores; hits whose scores tie (within 1e-5) may
    come in either order, since a float sum can differ in its last bit over another matrix."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.rank == w.rank and math.isclose(g.score, w.score, abs_tol=1e-5)

    def groups(hits):
        out, start = [], 0
        for i in range(1, len(hits) + 1):
            if i == len(hits) or abs(hits[i].score - hits[start].score) > 1e-5:
                out.append(sorted((h.chunk_id, h.doc_id, h.text, h.pages, h.start, h.end) for h in hits[start:i]))
                start = i
        return out

    assert groups(got) == groups(want)


def _plain(x):
    """x with NaN replaced by a marker, so that equal reports compare equal (NaN != NaN)."""
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _frame_rows(report, drop=("latency", "ms")):
    frame = report.frame
    keep = [c for c in frame.columns if not any(d in str(c) for d in drop)]
    return _plain(frame[keep].to_dict("records"))


def _values(report):
    return _plain({k: v for k, v in report.items() if k not in ("latency_ms", "run_id")})


def _outcome(run):
    from vectrixdb.errors import BadInput

    try:
        return ("scored", run())
    except BadInput as exc:
        return ("refused", str(exc))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=docs_strategy, who=principal_strategy, queries=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
       year=st.sampled_from([None, 2021]))
def test_a_view_is_a_collection_of_what_it_may_see(tmp_path, docs, who, queries, year):
    from vectrixdb.evaluation import check_golden, evaluate, retrieval_report, suggest_expected
    from vectrixdb.evaluation.golden.questions import Question, save_questions

    root = tempfile.mkdtemp(dir=tmp_path)
    items = _items(docs)
    full = Vectrix("c", path=f"{root}/full", model=HashEmbedder())
    full.add_documents(items, progress=False, chunk_size=60, overlap=10)
    principal = check_access(who)
    seen = [it for it in items if visible(check_access(it["access"]), principal)]
    fresh = Vectrix("c", path=f"{root}/fresh", model=HashEmbedder())
    fresh.add_documents(seen, progress=False, chunk_size=60, overlap=10)
    view = full.as_principal(who)

    where = {"year": year} if year is not None else None
    for query in [*queries, " ".join(queries)]:
        for mode in ("dense", "keyword", "hybrid"):
            for k in (2, 10):
                _same_hits(view.search(query, k, mode=mode, where=where), fresh.search(query, k, mode=mode, where=where))
        _same_hits(view.similar(query, 5), fresh.similar(query, 5))
    keys = full.catalog.chunk_texts()[0]
    for chunk_id in (row["chunk_id"] for row in full.catalog.chunk_rows(keys).values()):  # hidden ones too
        _same_hits(view.similar(chunk_id, 5, where=where), fresh.similar(chunk_id, 5, where=where))

    counts = ("documents", "pages", "chunks")
    assert {c: view.info()[c] for c in counts} == {c: fresh.info()[c] for c in counts}
    assert view.info()["spaces"] == fresh.info()["spaces"] and view.name == fresh.name
    assert view.documents() == fresh.documents()
    for item in items:
        assert view.document(item["doc_id"]) == fresh.document(item["doc_id"])

    questions = [Question(q, reference=f"{q} {WORDS[i]}", expected=(f"doc{i % len(items)}",), id=f"q{i}")
                 for i, q in enumerate([*queries, " ".join(queries)])]
    # a label naming a document the view does not hold is refused by both, with the same words
    outcomes = [_outcome(lambda: retrieval_report(db, questions, k=(1, 3))) for db in (view, fresh)]
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "refused":
        assert outcomes[0][1] == outcomes[1][1]
        held = {d["doc_id"] for d in fresh.documents()}
        questions = [q for q in questions if set(q.expected) <= held]
    if questions:
        got, want = retrieval_report(view, questions, k=(1, 3)), retrieval_report(fresh, questions, k=(1, 3))
        assert _values(got) == _values(want) and _frame_rows(got) == _frame_rows(want)
        got, want = (evaluate(db, questions, k=(1, 3), progress=False) for db in (view, fresh))
        key = lambda row: (row["mode"], row["vectors"], row["rerank"])  # noqa: E731 - order by setup, not speed
        assert sorted(_frame_rows(got), key=key) == sorted(_frame_rows(want), key=key)
    assert suggest_expected(view, questions) == suggest_expected(fresh, questions)
    golden = save_questions(questions, f"{root}/golden.jsonl")
    assert check_golden(golden, view).findings == check_golden(golden, fresh).findings
