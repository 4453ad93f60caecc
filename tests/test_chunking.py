"""Every technique keeps the invariants, on generated documents (hypothesis) and on a real 10-K.

Size tolerance: none. No chunk of any technique is longer than chunk_size characters (for
parent-child, the small chunks; parents are capped at 4 x chunk_size).
"""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vectrixdb.chunking import Outline, chunk_document, get_chunker, plain
from vectrixdb.chunking.parent_child import PARENT_FACTOR
from vectrixdb.reading import join_pages

TECHNIQUES = plain()  # every registered technique that needs no option of its own (the registry, not a list)

word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
sentence = st.lists(word, min_size=1, max_size=25).map(lambda ws: " ".join(ws).capitalize() + ".")
paragraph = st.lists(sentence, min_size=1, max_size=8).map(" ".join)
heading = st.tuples(st.integers(1, 3), st.lists(word, min_size=1, max_size=4)).map(lambda t: "#" * t[0] + " " + " ".join(t[1]))
bullets = st.lists(sentence, min_size=1, max_size=4).map(lambda xs: "\n".join("- " + x for x in xs))
monster = st.integers(150, 700).map(lambda n: "x" * n)  # one "word" longer than the chunk size
block = st.one_of(paragraph, paragraph, heading, bullets, monster, st.just("   \n \t"))
page = st.lists(block, min_size=0, max_size=6).map(lambda bs: "\n\n".join(bs))
document = st.lists(page, min_size=1, max_size=4).filter(lambda ps: any(p.strip() for p in ps))


def check_invariants(doc, chunks, size):
    md = doc.markdown
    covered = bytearray(len(md))
    outline = Outline(md)
    for c in chunks:
        assert md[c.start : c.end] == c.text
        assert c.text and c.text == c.text.strip()
        assert len(c.text) <= size, (len(c.text), size)
        assert c.pages == tuple(p.number for p in doc.pages if p.start < c.end and c.start < p.end)
        assert c.headings == outline.path_at(c.start)
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
        if c.parent is not None:
            assert c.parent.start <= c.start and c.end <= c.parent.end
            assert len(c.parent.text) <= size * PARENT_FACTOR
    missing = [i for i, ch in enumerate(md) if not ch.isspace() and not covered[i]]
    assert not missing, f"uncovered text at {missing[:5]}: {md[missing[0]:missing[0] + 40]!r}"


@pytest.mark.parametrize("technique", [pytest.param(t, marks=pytest.mark.slow) if t == "semantic" else t
                                       for t in TECHNIQUES])
def test_invariants_hold_on_generated_documents(technique):
    examples = 25 if technique == "semantic" else 150

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(document, st.sampled_from([100, 250, 600]), st.sampled_from([None, 0, 30]))
    def check(pages, size, overlap):
        doc = join_pages("d", pages, None)
        chunks = chunk_document(doc, technique, chunk_size=size, overlap=overlap)
        check_invariants(doc, chunks, size)

    check()


def test_semantic_invariants_hold_with_a_stand_in_embedder(fake_embedder):
    """The quick loop's copy of the semantic case above (which runs the bundled model, marked slow):
    the invariants do not depend on which vectors decide the cuts."""

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(document, st.sampled_from([100, 250, 600]), st.sampled_from([None, 0, 30]))
    def check(pages, size, overlap):
        doc = join_pages("d", pages, None)
        chunks = chunk_document(doc, "semantic", chunk_size=size, overlap=overlap, embedder=fake_embedder)
        check_invariants(doc, chunks, size)

    check()


def test_overlap_defaults_to_a_fifth_and_is_carried():
    text = " ".join(f"Sentence number {i} is here." for i in range(200))
    doc = join_pages("d", [text], None)
    chunks = chunk_document(doc, "recursive", chunk_size=200)
    shared = [a.end - b.start for a, b in zip(chunks, chunks[1:])]
    assert all(0 < s <= 40 for s in shared)  # overlap 40 = 200 // 5


def test_unknown_technique_and_bad_sizes():
    doc = join_pages("d", ["some text"], None)
    with pytest.raises(ValueError, match="unknown chunking technique 'paragraph'.*@register\\('name'\\) in its own "
                                         "module .*an entry point in the group 'vectrixdb.chunkers'"):
        chunk_document(doc, "paragraph")
    with pytest.raises(ValueError, match="overlap"):
        chunk_document(doc, "recursive", chunk_size=100, overlap=100)
    assert get_chunker("markdown") is get_chunker("structure")


def test_registration_refuses_a_chunker_the_callers_cannot_call():
    """register() checks a technique against what chunk_document, add_documents and compare_chunking
    pass (doc, chunk_size=, overlap=, embedder=): a function missing one of them, needing embedder or
    a keyword nobody passes, is refused naming the technique and the keyword; a fitting one (with its
    own defaulted options, or **kwargs) is registered and cut with."""
    from vectrixdb.chunking.base import CHUNKERS, make_chunks, register
    from vectrixdb.errors import BadType

    def no_embedder(doc, *, chunk_size, overlap):
        return []

    def needs_embedder(doc, *, chunk_size, overlap, embedder):
        return []

    def needs_more(doc, *, chunk_size, overlap, embedder=None, style):
        return []

    def no_doc(*, chunk_size, overlap, embedder=None):
        return []

    for fn, why in [(no_embedder, "cannot take the keyword 'embedder' the callers pass"),
                    (needs_embedder, "needs embedder= but chunk_document's callers may not pass it"),
                    (needs_more, "needs 'style', which no caller passes"),
                    (no_doc, "takes no positional parameter for the document")]:
        with pytest.raises(BadType, match=rf"chunking technique 'trial': {fn.__name__}\(.*\) {why}.*a chunker is "
                                          r"fn\(doc, \*, chunk_size, overlap, embedder=None, \*\*options\)"):
            register("trial")(fn)
        assert "trial" not in CHUNKERS

    def whole(doc, *, chunk_size, overlap, embedder=None, note="x"):
        return make_chunks(doc, [(0, min(chunk_size, len(doc.markdown)))])

    def open_ended(doc, **options):
        return whole(doc, **options)

    try:
        register("trial")(whole)
        register("trial_open")(open_ended)
        doc = join_pages("d", ["some text to keep whole"], None)
        for name in ("trial", "trial_open"):
            (chunk,) = chunk_document(doc, name, chunk_size=100)
            assert chunk.text == "some text to keep whole" == doc.markdown[chunk.start:chunk.end]
    finally:
        CHUNKERS.pop("trial", None)
        CHUNKERS.pop("trial_open", None)


def test_structure_cuts_at_headings():
    doc = join_pages("d", ["# A\n\nalpha text here\n\n## B\n\nbeta text here\n\n# C\n\ngamma text"], None)
    chunks = chunk_document(doc, "structure", chunk_size=1000)
    assert [c.headings for c in chunks] == [("A",), ("A", "B"), ("C",)]
    assert chunks[1].text.startswith("## B")


def test_parent_child_hands_back_the_section(db):
    section = "# Fees\n\n" + " ".join(f"Fee rule {i} applies to accounts of type {i}." for i in range(40))
    db.add_document(section + "\n\n# Other\n\nUnrelated closing words.", doc_id="fees", chunk="parent_child", chunk_size=200)
    hit = db.search("fee rule 17 accounts", 1)[0]
    assert hit.text.startswith("# Fees") and len(hit.text) > 200
    hits = db.search("fee rule", 10)
    parents = {(h.start, h.end) for h in hits}
    assert len(parents) == len(hits) < db.info()["chunks"]  # children of one parent come back once
    assert all(len(h.text) <= 200 * 4 for h in hits)


def test_embed_heading_changes_the_vector_not_the_text(db):
    text = "# Payment deferment\n\nCustomers can postpone what they owe."
    db.add_document(text, doc_id="plain")
    db.add_document(text, doc_id="headed", embed_heading=True)
    a, b = db.search("payment deferment", 2)
    assert a.text == b.text == text
    assert a.doc_id == "headed" and a.score > b.score
    assert db.catalog.conn.execute("SELECT embedded FROM chunks WHERE doc_id='headed'").fetchone()[0].startswith(
        "Payment deferment\n\n")


@pytest.fixture(scope="module")
def uber(uber_10k):  # one read of the filing per run, shared with test_reading (conftest)
    return uber_10k


SEMANTIC_PAGE_STEP = 5  # the semantic case reads every fifth page of the filing (see below)


@pytest.mark.slow
@pytest.mark.parametrize("technique", TECHNIQUES)
def test_invariants_on_a_real_10k(uber, technique):
    """Every technique on the whole filing (307 pages) but semantic, which runs on every fifth of its
    pages (62 pages joined as one document: cover, text, tables and notes alike, 3,197 sentences):
    semantic runs the bundled model on every sentence, and the whole filing's 15,203 sentences are
    minutes of embedding that show the same invariants."""
    doc = uber
    if technique == "semantic":
        doc = join_pages(uber.doc_id, [uber.page_text(n) for n in range(1, len(uber.pages) + 1, SEMANTIC_PAGE_STEP)],
                         uber.source)
    chunks = chunk_document(doc, technique, chunk_size=1000)
    check_invariants(doc, chunks, 1000)
    assert any(len(c.pages) == 2 for c in chunks)  # a chunk running over a page break covers both
    assert {p for c in chunks for p in c.pages} == {p.number for p in doc.pages if p.end > p.start}


class StandInCutter:
    """Topic starts chosen by the paragraphs' own text (for the invariants; the model's are tested apart)."""

    calls = 0

    def starts(self, paragraphs):
        self.calls += 1
        return [i for i, p in enumerate(paragraphs) if i == 0 or len(p) % 3 == 0] + [len(paragraphs) + 5, -1]


def test_llm_cuts_keep_the_invariants_on_generated_documents():
    cutter = StandInCutter()

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(document, st.sampled_from([100, 250, 600]), st.sampled_from([None, 0, 30]))
    def check(pages, size, overlap):
        doc = join_pages("d", pages, None)
        chunks = chunk_document(doc, "llm", chunk_size=size, overlap=overlap, cut_with=cutter)
        check_invariants(doc, chunks, size)

    check()
    assert cutter.calls > 0
    with pytest.raises(ValueError, match="cut_with=llm_cutter"):
        chunk_document(join_pages("d", ["text"], None), "llm")
