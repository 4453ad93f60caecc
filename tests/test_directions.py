"""Each measure's declared direction and best: what colours, verdicts and the certificate read."""
from __future__ import annotations

import pytest

from vectrixdb.evaluation import Question, run_evaluation
from vectrixdb.evaluation.retrieval.measures import FAMILIES, direction_of, family_of
from vectrixdb.present import certify
from vectrixdb.present.certificate import certificate


def test_every_family_declares_a_direction_and_set_figures_read_their_family():
    assert all(f.direction in ("higher", "lower", "coverage") for f in FAMILIES.values())
    assert direction_of("unjudged@5") == "coverage" and direction_of("ndcg@10") == "higher"
    assert family_of("page_f1@10") is FAMILIES["f1"] and family_of("doc_precision@3") is FAMILIES["precision"]
    assert family_of("accuracy") is None and direction_of("accuracy") == "higher"  # a judged score


@pytest.mark.parametrize("k, relevant, precision, f1", [(10, 1, 0.1, 2 / 11), (1, 1, 1.0, 1.0), (3, 5, 1.0, 0.75)])
def test_the_best_precision_and_f1_a_question_allows(k, relevant, precision, f1):
    assert FAMILIES["precision"].best(k, relevant) == pytest.approx(precision)
    assert FAMILIES["f1"].best(k, relevant) == pytest.approx(f1)
    assert FAMILIES["recall"].best(k, relevant) == 1.0


def test_a_perfect_run_at_k_10_shows_f1_against_its_best_not_as_a_poor_score():
    """One expected page, k = 10, the right page first and nine others: page F1 is 0.18, the best
    these labels allow. The certificate says so and colours it as the best it can be."""
    qs = [Question(f"q{i}?", None, [f"d{i}#page=1"], f"q{i}") for i in range(4)]
    run = run_evaluation(lambda q: [{"doc_id": f"d{q[1]}", "pages": [1]}] +
                         [{"doc_id": f"x{n}", "chunk_id": f"x{n}::0", "pages": [1]} for n in range(9)], qs, k=10)
    assert run["levels"]["page"]["f1"] == pytest.approx(2 / 11)
    assert certify.attainable(run, "page_f1@10") == pytest.approx(2 / 11)
    assert certify.attainable(run, "page_capped_recall@10") is None  # it reaches 1
    rows = {name: (text, heat) for name, text, heat in certificate(run)["headline"]}
    text, heat = rows["page_f1@10"]
    assert "best 0.18 on these labels" in text and heat == pytest.approx(1.0)
    row = run.frame.loc["q0"].to_dict()
    assert certify.heat_value("page_f1@10", row["page_f1@10"], row) == pytest.approx(1.0)
    assert certify.heat_value("unjudged@10", 0.4, row) is None  # coverage: never coloured as quality


def test_a_coverage_change_is_higher_or_lower_never_better_or_worse():
    import pandas as pd

    from vectrixdb.evaluation.runs.experiments import compare_runs
    from vectrixdb.evaluation.runs.report import Report

    ids = [f"q{i}" for i in range(40)]
    a = Report("retrieval", {"k": [5]}, pd.DataFrame({"unjudged@5": [0.8] * 40, "ndcg@5": [0.2] * 40}, index=ids))
    b = Report("retrieval", {"k": [5]}, pd.DataFrame({"unjudged@5": [0.2] * 40, "ndcg@5": [0.9] * 40}, index=ids))
    verdicts = compare_runs(a, b).frame["verdict"].to_dict()
    assert verdicts == {"unjudged@5": "lower", "ndcg@5": "better"}
