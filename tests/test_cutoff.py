import numpy as np
import pytest
from typer.testing import CliRunner

from vectrixdb.cli import app
from vectrixdb.evaluation import Question, answer_cutoff, save_questions
from vectrixdb.evaluation.cutoff import rates, separation

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
    assert "(chosen)" in done.output and "separation" in done.output
