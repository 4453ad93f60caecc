"""The grade measures quality, not k (issue 25 item 1): a perfect retriever gets A and meets the
default SLA at every k from 1 to 100, one that returns nothing right gets F, and moving a right
answer up never lowers the grade - on retrieval reports and RAG evaluations built by the real
functions, and on chunking comparisons shaped as compare_chunking writes them."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vectrixdb.present import certify
from vectrixdb.evaluation import Question, retrieval_report, run_evaluation
from vectrixdb.evaluation.runs.report import Report

RANK = "ABCDF"
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def golden(expected_counts: list[int]) -> list[Question]:
    return [Question(f"question {i}?", f"answer {i}", [f"d{i}-{j}" for j in range(n)], f"q{i}")
            for i, n in enumerate(expected_counts)]


def noise(n: int) -> list[str]:
    return [f"other-{j}" for j in range(n)]


def perfect(qs):
    table = {q.question: list(q.expected) for q in qs}
    return lambda query: table[query] + noise(110)


def judge(metric, question, reference, answer, sources):
    """Right when the answer is the reference; grounded when some source is a document it expects."""
    if metric == "accuracy":
        return 1.0 if answer == reference else 0.0
    return 1.0 if any(s.startswith("d") for s in sources) else 0.0


def letter(report) -> tuple[int, float | None]:
    got = certify.grade(report, certify.DEFAULT_SLA)
    return RANK.index(got["letter"]), got["score"]


COUNTS = st.lists(st.integers(1, 4), min_size=1, max_size=5)
K = st.integers(1, 100)


@FAST
@given(counts=COUNTS, k=K)
def test_a_perfect_retriever_gets_a_and_meets_the_default_sla_at_every_k(counts, k):
    qs = golden(counts)
    report = retrieval_report(perfect(qs), qs, k=k, n_resamples=200)
    check = certify.compliance(report, certify.DEFAULT_SLA)
    assert certify.grade(report, certify.DEFAULT_SLA)["letter"] == "A" and check["met"], check
    assert f"doc_f1@{k}" in certify.figures(report)  # set figures carry their k
    answers = {q.question: q.reference for q in qs}
    rag = run_evaluation(lambda query: (perfect(qs)(query), answers[query]), qs, judge=judge, k=k)
    check = certify.compliance(rag, certify.DEFAULT_SLA)
    assert certify.grade(rag, certify.DEFAULT_SLA)["letter"] == "A" and check["met"], check
    assert certify.figures(rag)[f"doc_capped_recall@{k}"] == 1.0


@FAST
@given(counts=COUNTS, k=K)
def test_a_retriever_with_nothing_right_gets_f(counts, k):
    qs = golden(counts)
    report = retrieval_report(lambda query: noise(120), qs, k=k, n_resamples=200)
    assert certify.grade(report, certify.DEFAULT_SLA)["letter"] == "F"
    rag = run_evaluation(lambda query: (noise(k), "no idea"), qs, judge=judge, k=k)
    assert certify.grade(rag, certify.DEFAULT_SLA)["letter"] == "F"
    assert not certify.compliance(rag, certify.DEFAULT_SLA)["met"]


@FAST
@given(counts=COUNTS, k=st.integers(1, 12), data=st.data())
def test_moving_a_right_answer_up_never_lowers_the_grade(counts, k, data):
    qs = golden(counts)
    rankings = {}
    for q in qs:
        ranked = list(q.expected) + noise(12)
        rankings[q.question] = data.draw(st.permutations(ranked))
    moved = {key: list(r) for key, r in rankings.items()}
    target = data.draw(st.sampled_from(sorted(moved)))
    ranking = moved[target]
    right = [i for i, d in enumerate(ranking) if d.startswith("d")]
    wrong = [i for i, d in enumerate(ranking) if not d.startswith("d")]
    i = data.draw(st.sampled_from(right))
    above = [j for j in wrong if j < i]
    if above:  # the right answer at i swaps with a wrong one above it
        j = data.draw(st.sampled_from(above))
        ranking[i], ranking[j] = ranking[j], ranking[i]
    answers = {q.question: q.reference for q in qs}
    for system in (lambda r: retrieval_report(lambda query: r[query], qs, k=k, n_resamples=200),
                   lambda r: run_evaluation(lambda query: (r[query], answers[query]), qs, judge=judge, k=k)):
        before, after = letter(system(rankings)), letter(system(moved))
        assert after[0] <= before[0] and after[1] >= before[1] - 1e-12, (before, after)


def chunking(found: list[int], of: int, right: list[int] | None = None) -> Report:
    """A chunking comparison's values as compare_chunking writes them: its builds, best first."""
    rows = [{"name": name, "right": (right or found)[n], "found": found[n], "of": of, "chunk_size": 400,
             "embed_heading": False, "chunks": 30 + n, "p_value": None, "tie": False}
            for n, name in enumerate(["recursive", "fixed", "sentence", "semantic"][:len(found)])]
    rows.sort(key=lambda r: -(r["right"] if right else r["found"]))
    values = {"best": rows[0], "techniques": rows, "questions": of, "decided_by": "answered right" if right else "found",
              "alpha": 0.05}
    return Report("chunking", values, None)


@FAST
@given(of=st.integers(1, 60), builds=st.integers(1, 4), data=st.data())
def test_chunking_comparisons_by_the_same_three_rules(of, builds, data):
    found = data.draw(st.lists(st.integers(0, of), min_size=builds, max_size=builds))
    best = chunking([of] * builds, of)
    check = certify.compliance(best, certify.DEFAULT_SLA)
    assert certify.grade(best, certify.DEFAULT_SLA)["letter"] == "A" and check["met"]
    assert check["verdict"] == (f"MEETS SLA (1 of 1 applicable thresholds met; {len(certify.DEFAULT_SLA) - 1} do not "
                                "apply to a chunking comparison)")
    assert certify.grade(chunking([0] * builds, of), certify.DEFAULT_SLA)["letter"] == "F"
    judged = chunking([of] * builds, of, right=[of] * builds)
    assert certify.grade(judged, {})["graded"] == {"found_share": 1.0, "right_share": 1.0}
    more = list(found)
    n = data.draw(st.integers(0, builds - 1))
    more[n] = min(of, more[n] + data.draw(st.integers(0, of)))
    before, after = letter(chunking(found, of)), letter(chunking(more, of))
    assert after[0] <= before[0] and after[1] >= before[1]


def test_old_sla_names_still_apply_and_say_which_figure_they_read():
    qs = golden([1, 1, 2])
    report = retrieval_report(perfect(qs), qs, k=[1, 10], n_resamples=200)
    check = certify.compliance(report, certify.parse_sla({"doc_f1": 0.1, "recall": 0.8, "ndcg@5": 0.5,
                                                          "accuracy": 0.9}))
    rows = {r["figure"]: r for r in check["rows"]}
    assert rows["doc_f1, read as doc_f1@10"]["verdict"] == "pass"
    assert rows["recall, read as recall@10"]["actual"] == 1.0
    assert rows["ndcg@5"]["verdict"] == "does not apply" and rows["accuracy"]["verdict"] == "does not apply"
    assert check["verdict"] == "MEETS SLA (2 of 2 applicable thresholds met; 2 do not apply to a retrieval report)"
    graded = certify.grade(report, {})
    assert set(graded["graded"]) == {"ndcg@10", "mrr@100"} and "doc_f1@10" in certify.figures(report)
    assert "ndcg@10 1.000" in graded["why"]


def test_nothing_to_grade_is_no_grade_not_a_perfect_one():
    empty = retrieval_report(lambda q: [], [Question("q?", None, [], "q")], k=10)
    assert certify.grade(empty, certify.DEFAULT_SLA)["letter"] == "–"
    check = certify.compliance(empty, certify.DEFAULT_SLA)
    assert not check["met"] and check["verdict"].startswith("NO SLA THRESHOLD APPLIES")


@pytest.mark.parametrize("k", [1, 3, 10, 100])
def test_the_rule_printed_names_what_is_graded(k):
    assert "nDCG@k" in certify.GRADE_RULE and "not graded" in certify.GRADE_RULE and "0.18" in certify.GRADE_RULE
    assert certify.graded(f"ndcg@{k}") and certify.graded(f"page_capped_recall@{k}")
    assert not certify.graded(f"page_f1@{k}") and not certify.graded(f"recall@{k}")


def test_a_setup_comparison_is_graded_by_its_best_setup(policies):
    from vectrixdb.evaluation import evaluate

    qs = [Question("Can I defer loan payments after a disaster?", None, ["deferment"], "1"),
          Question("Am I liable after reporting a stolen card?", None, ["card-fraud"], "2")]
    table = evaluate(policies, qs, k=(1, 3), modes=("dense", "keyword"), progress=False)
    got = certify.figures(table)
    best = table["best"]
    assert got["ndcg@3"] == best["ndcg@3"] and got[f"mrr@{table['depth']}"] == best["mrr"]
    graded = certify.grade(table, certify.DEFAULT_SLA)
    assert set(graded["graded"]) == {"ndcg@3", f"mrr@{table['depth']}"}
    assert graded["score"] == (best["ndcg@3"] + best["mrr"]) / 2


def useless(qs):
    return lambda query: noise(20)


@pytest.mark.parametrize("n, system, letter, supported", [
    (1, perfect, "A", False),     # one perfect question: 0.21 to 1, F to A
    (40, perfect, "A", True),     # forty perfect ones: 0.91 to 1
    (1, useless, "F", False),     # one useless question: 0 to 0.79
    (40, useless, "F", True),     # forty useless ones: 0 to 0.09
])
def test_the_grade_says_when_its_questions_are_too_few_to_support_it(n, system, letter, supported):
    qs = golden([1] * n)
    report = retrieval_report(system(qs), qs, k=10, n_resamples=200)
    got = certify.grade(report, certify.DEFAULT_SLA)
    backing = got["support"]
    assert got["letter"] == letter and backing["supported"] is supported and backing["n"] == n
    assert backing["high"] - backing["low"] <= certify.BAND if supported else backing["high"] - backing["low"] > 0.5
    assert ("TOO FEW QUESTIONS" in got["why"]) is (not supported) and backing["text"] in got["why"]
    if not supported:
        assert f"to support grade {letter}" in got["why"] and backing["needed"] > n
    assert "Wilson" in certify.GRADE_RULE and "0.10" in certify.GRADE_RULE


def test_forty_questions_at_a_middling_score_do_not_support_a_grade_and_the_count_that_would_is_exact():
    """Half the questions right at rank 1, half missed: score 0.5 over 40 questions spans grades."""
    qs = golden([1] * 40)
    table = {q.question: (list(q.expected) if i % 2 == 0 else []) + noise(20) for i, q in enumerate(qs)}
    got = certify.grade(retrieval_report(lambda query: table[query], qs, k=10, n_resamples=200), certify.DEFAULT_SLA)
    backing = got["support"]
    assert got["score"] == pytest.approx(0.5) and not backing["supported"] and backing["spans"] == "F to D"
    needed = backing["needed"]
    assert certify.support(0.5, needed)["supported"] and not certify.support(0.5, needed - 1)["supported"]
    from statsmodels.stats.proportion import proportion_confint

    width = lambda m: float(-(lambda lh: lh[0] - lh[1])(proportion_confint(0.5 * m, m, method="wilson")))  # noqa: E731
    assert needed == next(m for m in range(1, 1000) if width(m) <= certify.BAND)  # near (2 * 1.96 * 0.5 / 0.1)^2


@pytest.mark.parametrize("p, n", [(0.0, 1), (1.0, 1), (0.5, 7), (0.85, 40), (0.713, 5), (0.999, 300)])
def test_wilson_interval_equals_statsmodels(p, n):
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(p * n, n, alpha=0.05, method="wilson")
    assert certify.wilson(p, n) == pytest.approx((max(0.0, low), min(1.0, high)), abs=1e-12)
