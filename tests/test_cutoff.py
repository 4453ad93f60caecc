import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from vectrixdb.cli.commands import app
from vectrixdb.evaluation import Question, answer_cutoff, save_questions
from vectrixdb.evaluation.retrieval.cutoff import rates, separation, table_text

OUTSIDE = ["How do zebras sleep?", "Who won the 1966 football world cup?", "What is the boiling point of ethanol?",
           "How many moons does Jupiter have?", "Best recipe for sourdough bread", "Who painted the Mona Lisa?"]


def test_separation_and_rates_by_hand():
    assert separation(np.array([3.0, 4.0]), np.array([1.0, 2.0])) == 1.0
    assert separation(np.array([1.0]), np.array([1.0])) == 0.5
    assert separation(np.array([1.0, 3.0]), np.array([2.0])) == 0.5
    r = rates(np.array([0.9, 0.8, 0.4]), np.array([0.85, 0.3]), 0.8)
    assert r == {"cutoff": 0.8, "right_when_answers": pytest.approx(2 / 3), "answers_kept": pytest.approx(2 / 3),
                 "near_misses_declined": 0.5}


def test_too_few_says_which_side_is_short(policies):
    found = answer_cutoff(policies, [Question("Can I defer a loan payment?", None, ["deferment"], "1")],
                          unanswerable=["How do zebras sleep?"])
    assert found["cutoff"] is None and "1 answers and 1 near misses" in found["reason"]


def _questions():
    return [Question("Can I defer loan payments after a disaster?", None, ["deferment"], "1"),
            Question("Are there late fees when payments are deferred?", None, ["deferment"], "2"),
            Question("Is there fast access to funds for displaced customers?", None, ["emergency-fund"], "3"),
            Question("Are fees waived for people displaced by a disaster?", None, ["emergency-fund"], "4"),
            Question("Am I liable for charges after reporting a stolen card?", None, ["card-fraud"], "5"),
            Question("What should I do when my card is stolen?", None, ["card-fraud"], "6"),
            Question("How much can I overpay on my mortgage without penalty?", None, ["mortgage"], "7")]


def test_cutoff_on_answers_and_outside_questions(policies):
    found = answer_cutoff(policies, _questions(), unanswerable=OUTSIDE, n_resamples=300)
    assert len(found["answers"]) == 7 and len(found["near_misses"]) == 6
    assert 0.5 < found["separation"] <= 1.0
    low, high = found["separation_ci"]
    assert low <= found["separation"] <= high
    chosen = [row for row in found["table"] if row["chosen"]]
    assert len(chosen) == 1 and chosen[0]["cutoff"] == found["cutoff"]
    # the Youden rule: no candidate has a larger kept + declined
    best = max(r["answers_kept"] + r["near_misses_declined"] for _, r in found.candidates.iterrows())
    assert chosen[0]["answers_kept"] + chosen[0]["near_misses_declined"] == pytest.approx(best)
    assert set(found.frame["kind"]) == {"answer", "unanswerable"}


def test_relevance_needs_a_reranker(policies):
    with pytest.raises(ValueError, match="pass rerank="):
        answer_cutoff(policies, _questions(), OUTSIDE, measure="relevance")
    found = answer_cutoff(policies, _questions(), OUTSIDE, measure="relevance", n_resamples=200,
                          rerank=lambda q, texts: [len(set(q.lower().split()) & set(t.lower().split())) for t in texts])
    assert found["measure"] == "relevance" and found["cutoff"] is not None


def test_cli_prints_the_table(policies, tmp_path):
    golden = save_questions(_questions(), str(tmp_path / "golden.jsonl"))
    outside = tmp_path / "outside.txt"
    outside.write_text("\n".join(OUTSIDE) + "\n")
    done = CliRunner().invoke(app, ["golden", "cutoff", "test", "--golden", golden, "--unanswerable", str(outside),
                                    "--path", str(policies.folder.parent)])
    assert done.exit_code == 0, done.output
    assert "(chosen: largest kept + declined, ties to the stricter)" in done.output and "separation" in done.output


class Scripted:
    """A store whose top hit for each question is fixed: (doc_id, pages, score)."""

    def __init__(self, tops):
        self.tops = tops

    def documents(self):
        return []

    def search(self, text, k, **options):
        from vectrixdb.search import Hit

        doc, pages, score = self.tops[text]
        return [Hit(f"{doc}::0", doc, tuple(pages), "text", score, 1)]


def test_a_five_way_tie_goes_to_the_strictest_cutoff_exactly():
    answers, misses = [0.2, 0.4, 0.6, 0.8, 1.0], [0.1, 0.3, 0.5, 0.7, 0.9]
    tops = {f"a{i}": ("right", [1], s) for i, s in enumerate(answers)}
    tops.update({f"m{i}": ("other", [1], s) for i, s in enumerate(misses)})
    questions = [Question(f"a{i}", None, ["right"], f"a{i}") for i in range(5)]
    questions += [Question(f"m{i}", None, ["right"], f"m{i}") for i in range(5)]
    found = answer_cutoff(Scripted(tops), questions, n_resamples=200)
    # kept + declined - 1 is 0.2 at 0.2, 0.4, 0.6, 0.8 and 1.0; as floats 0.4 + 0.8 - 1 < 0.2 + 1.0 - 1
    assert found["cutoff"] == 1.0
    assert found["chosen"]["answers_kept"] == 0.2 and found["chosen"]["near_misses_declined"] == 1.0


def test_a_row_mixing_a_whole_document_and_pages_is_answered_by_the_document():
    tops = {f"q{i}": ("report.pdf", [7], 0.9 - i / 100) for i in range(5)}
    tops.update({f"u{i}": ("other", [1], 0.1 + i / 100) for i in range(5)})
    questions = [Question(f"q{i}", None, ["report.pdf", "other.pdf#page=3"], f"q{i}") for i in range(5)]
    found = answer_cutoff(Scripted(tops), questions, [f"u{i}" for i in range(5)], n_resamples=200)
    assert len(found["answers"]) == 5 and len(found["near_misses"]) == 5


def test_fused_scores_are_refused_with_the_mode_to_use(policies):
    with pytest.raises(ValueError, match="reciprocal-rank fusion.*mode='dense'"):
        answer_cutoff(policies, _questions(), OUTSIDE, mode="hybrid")
    hits = policies.search("stolen card", 3, mode="hybrid")
    assert {h.score_kind for h in hits} == {"rrf"}
    assert {h.score_kind for h in policies.search("stolen card", 3, mode="keyword")} == {"bm25"}
    assert {h.score_kind for h in policies.search("stolen card", 3, mode="dense")} == {"cosine"}
    assert {h.score_kind for h in policies.search("stolen card", 3)} == {"rrf"}  # hybrid, the default
    assert answer_cutoff(policies, _questions(), OUTSIDE, n_resamples=50)["mode"] == "dense"  # not search's default


def test_after_a_rerank_a_hit_carries_the_rerankers_score(policies):
    hits = policies.search("stolen card", 3, rerank=lambda q, texts: [len(t) / 1000 for t in texts])
    assert all(h.score_kind == "rerank" and h.score == h.relevance == pytest.approx(len(h.text) / 1000) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


class Recording(Scripted):
    """A Scripted store that remembers the options every search was given."""

    def __init__(self, tops):
        super().__init__(tops)
        self.options: list[dict] = []

    def search(self, text, k, **options):
        self.options.append(options)
        return super().search(text, k, **options)


def test_keyword_mode_declines_an_outside_question_that_shares_no_word(policies):
    nonsense = "Qwzx vbnmk plorf?"
    assert policies.search(nonsense, 1, mode="keyword") == []  # no word shared with the collection
    found = answer_cutoff(policies, _questions(), [*OUTSIDE, nonsense], mode="keyword", n_resamples=200)
    assert found["mode"] == "keyword"
    row = found.frame.loc["unanswerable-7"]
    assert row["kind"] == "unanswerable" and pd.isna(row["top_doc"]) and pd.isna(row["score"])  # None in the frame
    assert "unanswerable-7" in found["found_nothing"]
    # declined by every cut-off: it counts among the near misses and below every row of the table
    unscored = len(found["found_nothing"])
    assert found["separations"]["unanswerable"]["near_misses"] == 7
    assert len(found["near_misses"]) + unscored == 7 and found["cutoff"] is not None
    assert all(row["near_misses_declined"] >= unscored / 7 for row in found["table"])
    found.to_json()  # no -inf or NaN reaches the JSON


def test_the_two_separations_are_reported_apart():
    answers = [0.6, 0.7, 0.8, 0.9, 1.0]
    wrong = [0.55, 0.65, 0.75, 0.85, 0.95]  # labelled questions whose top result is another document
    outside = [0.1, 0.2, 0.3, 0.4, 0.5]
    tops = {f"a{i}": ("right", [1], s) for i, s in enumerate(answers)}
    tops.update({f"w{i}": ("other", [1], s) for i, s in enumerate(wrong)})
    tops.update({f"u{i}": ("other", [1], s) for i, s in enumerate(outside)})
    questions = [Question(q, None, ["right"], q) for q in [*(f"a{i}" for i in range(5)), *(f"w{i}" for i in range(5))]]
    found = answer_cutoff(Scripted(tops), questions, [f"u{i}" for i in range(5)], n_resamples=300)
    near, out = found["separations"]["near_misses"], found["separations"]["unanswerable"]
    # by hand: answer > wrong in 5 + 4 + 3 + 2 + 1 = 15 of 25 pairs; every answer beats every outside question
    assert near["separation"] == pytest.approx(15 / 25) and out["separation"] == 1.0
    assert found["separation"] == pytest.approx((15 + 25) / 50)  # the cut-off's own, over all near misses
    assert (near["answers"], near["near_misses"], out["answers"], out["near_misses"]) == (5, 5, 5, 5)
    assert near["ci"][0] <= near["separation"] <= near["ci"][1] and out["ci"] == [1.0, 1.0]
    assert "separation (answers vs near misses of labelled questions)" in table_text(found)


def test_the_mode_is_dense_unless_told_and_is_recorded():
    tops = {f"a{i}": ("right", [1], 0.5 + i / 10) for i in range(5)}
    tops.update({f"u{i}": ("other", [1], i / 10) for i in range(5)})
    store = Recording(tops)
    found = answer_cutoff(store, [Question(f"a{i}", None, ["right"], f"a{i}") for i in range(5)],
                          [f"u{i}" for i in range(5)], n_resamples=100)
    assert found["mode"] == "dense" and found["search"]["mode"] == "dense"
    assert store.options and all(o.get("mode") == "dense" for o in store.options)  # said, not left to search()
    found = answer_cutoff(store, [Question("a1", None, ["right"], "a1")], ["u1"], mode="keyword")
    assert found["mode"] == "keyword" and store.options[-1]["mode"] == "keyword"
    with pytest.raises(ValueError, match="unknown search mode 'sparse'.*dense"):
        answer_cutoff(store, [Question("a1", None, ["right"], "a1")], mode="sparse")


def test_every_question_answered_leaves_separation_undefined_with_a_reason():
    tops = {f"a{i}": ("right", [1], 0.5 + i / 10) for i in range(6)}
    found = answer_cutoff(Scripted(tops), [Question(f"a{i}", None, ["right"], f"a{i}") for i in range(6)])
    assert found["cutoff"] is None and found["separation"] is None and "0 near misses" in found["reason"]
    for name, part in found["separations"].items():
        assert part["separation"] is None and part["ci"] is None and part["near_misses"] == 0, name
    assert "no near misses" in found["separations"]["near_misses"]["reason"]
    assert "no unanswerable" in found["separations"]["unanswerable"]["reason"]
    assert "no cut-off" in table_text(found)


def test_one_question_is_no_measurement():
    found = answer_cutoff(Scripted({"a": ("right", [1], 0.9), "u": ("other", [1], 0.2)}),
                          [Question("a", None, ["right"], "a")], ["u"])
    assert found["cutoff"] is None and found["separation"] is None and found["table"] is None
    assert "1 answers and 1 near misses" in found["reason"]
    assert found["separations"]["unanswerable"]["separation"] is None
    assert "need at least 5" in found["separations"]["unanswerable"]["reason"]
