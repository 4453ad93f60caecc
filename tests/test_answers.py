"""answer_report, judges and calibrate: the spec's example, out-of-range judges, repeats, agreement."""
import math

import pandas as pd
import pytest

from vectrixdb.evaluation import Question, answer_report, calibrate, load_questions, save_questions


def test_the_spec_example_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save_questions([Question("Can a customer postpone a loan payment after a wildfire?", "Yes, payments can be deferred.",
                             ["deferment"], "q1")], "golden.jsonl")
    questions = load_questions("golden.jsonl")

    def judge(metric, question, reference, answer, sources):
        return 1.0   # your model goes here: a number from 0 to 1

    metrics = answer_report(questions, {"q1": {"answer": "Yes, loan payments can be deferred.", "sources": ["deferment"]}},
                            judge)["metrics"]
    assert metrics == {"correctness": 1.0, "completeness": 1.0, "faithfulness": 1.0, "helpfulness": 1.0}


QS = [Question(f"question {i}?", f"answer {i}", ["d"], f"q{i}") for i in range(6)]
ANSWERS = {f"q{i}": {"answer": f"reply {i}", "sources": ["d"]} for i in range(5)}


@pytest.mark.parametrize("bad", [7, -0.1, float("nan"), None, "high", True])
def test_a_score_outside_zero_one_names_the_question_and_metric(bad):
    with pytest.raises(ValueError, match=r"for correctness of question 'question 0\?'"):
        answer_report(QS, ANSWERS, lambda *args: bad, metrics=["correctness"])


def test_scores_reasons_intervals_and_unanswered():
    def judge(metric, question, reference, answer, sources):
        n = int(answer.split()[-1])
        return {"score": n / 4 if metric == "correctness" else 1.0, "reason": f"{metric} of {n}"}

    report = answer_report(QS, ANSWERS, judge, metrics=["correctness", "helpfulness"])
    assert report["questions"] == 5 and report["unanswered"] == 1
    assert report["metrics"]["correctness"] == pytest.approx((0 + 0.25 + 0.5 + 0.75 + 1.0) / 5)
    low, high = report["ci"]["correctness"]
    assert low < report["metrics"]["correctness"] < high
    assert report.frame.loc["q2", "correctness reason"] == "correctness of 2"
    assert report["outcomes"]["correctness"] == {"ok": 5}
    with pytest.raises(ValueError, match="not in the golden set"):
        answer_report(QS, {"nope": {"answer": "x"}}, judge)


def test_repeats_report_spread_and_flips():
    calls = {}

    def wobbly(metric, question, reference, answer, sources):
        calls[answer] = calls.get(answer, 0) + 1
        if answer == "reply 0":  # flips across 0.5 on every other call
            return 0.2 if calls[answer] % 2 else 0.8
        return 0.9

    report = answer_report(QS, ANSWERS, wobbly, metrics=["correctness"], repeats=4, threshold=0.5)
    assert calls["reply 0"] == 4
    assert report.frame.loc["q0", "correctness"] == pytest.approx(0.5)
    assert report.frame.loc["q0", "correctness flipped"] == True  # noqa: E712
    assert report["repeats"]["correctness"]["flip_rate"] == pytest.approx(1 / 5)
    assert report["repeats"]["correctness"]["spread"] == pytest.approx(0.3 / 5)


def test_calibrate_measures_agreement_with_people():
    labelled = [{"metric": "correctness", "question": f"q{i}", "reference": f"r{i}", "answer": f"a{i}", "human": h}
                for i, h in enumerate([0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 0.0, 0.5])]
    same = calibrate(lambda m, q, r, a, s: [x["human"] for x in labelled if x["answer"] == a][0], labelled)
    assert same["kappa"] == pytest.approx(1.0) and same["weighted_kappa"] == pytest.approx(1.0)
    assert same["spearman"] == pytest.approx(1.0)
    opposite = calibrate(lambda m, q, r, a, s: 1 - [x["human"] for x in labelled if x["answer"] == a][0], labelled)
    assert opposite["kappa"] < 0 and opposite["spearman"] == pytest.approx(-1.0)
    assert same.plot().axes


def test_calibrate_with_under_two_scores_has_every_figure_as_none_and_says_why(tmp_path):
    """A model judge that scored one item of three (the others unreadable, as a small model writes)
    gives the same keys as one that scored all, each figure None, never a perfect agreement."""
    import json

    from tests.llama_server import Scripted
    from vectrixdb.chat.writer import ChatWriter

    labelled = [{"metric": "correctness", "question": f"q{i}", "reference": f"r{i}", "answer": f"a{i}", "human": h}
                for i, h in enumerate([0.0, 1.0, 1.0])]
    server = Scripted()
    try:
        server.answer(json.dumps({"score": 1.0, "reason": "because"}))
        for _ in range(2):
            server.answer("not json").answer("still not json")  # parse_failed after one retry
        writer = ChatWriter(server.url, model="judge", max_retries=0, max_concurrency=1)  # replies in order
        report = calibrate(writer, labelled)
    finally:
        server.close()
    assert (report["items"], report["scored"]) == (3, 1)
    assert all(report[key] is None for key in ("kappa", "weighted_kappa", "spearman", "agreement"))
    assert report["reason"] == "only 1 item(s) got a score from the judge"


def test_cohen_kappa_by_hand():
    from vectrixdb.evaluation.generation.answers import cohen_kappa

    # 2x2: both yes 20, a yes b no 5, a no b yes 10, both no 15 -> po 0.7, pe 0.5*0.6 + 0.5*0.4 = 0.5
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx((0.7 - 0.5) / (1 - 0.5))
    assert cohen_kappa([1, 1], [1, 1]) is None
    assert math.isclose(cohen_kappa([0, 1, 2], [0, 1, 2], weights="quadratic"), 1.0)


def test_a_model_judge_counts_unscorable_replies_and_never_averages_them(tmp_path):
    import json

    from tests.llama_server import Scripted
    from vectrixdb.chat.writer import ChatWriter

    server = Scripted()
    try:
        verdict = lambda score: json.dumps({"score": score, "reason": "because"})  # noqa: E731
        server.answer(verdict(0.8), prompt=50, completion=7)          # q0: ok
        server.answer("not json").answer("still not json")             # q1: parse_failed after one retry
        server.answer(verdict(7), completion=3).answer(verdict(2))     # q2: out of range twice: parse_failed
        server.answer(verdict(0.4))                                    # q3: ok
        server.answer(verdict(1.0))                                    # q4: ok
        writer = ChatWriter(server.url, model="judge", cache=str(tmp_path / "judge.sqlite"), max_retries=0,
                            prices={"judge": {"prompt": 1.0, "completion": 2.0}},
                            max_concurrency=1)  # the script answers in the order asked
        report = answer_report(QS, ANSWERS, writer, metrics=["correctness"])
        assert report["outcomes"]["correctness"] == {"ok": 3, "parse_failed": 2}
        assert report["scored"]["correctness"] == 3
        assert report["metrics"]["correctness"] == pytest.approx((0.8 + 0.4 + 1.0) / 3)
        assert report.frame.loc["q1", "correctness outcome"] == "parse_failed"
        assert pd.isna(report.frame.loc["q1", "correctness"])
        assert report["model"]["requests"] == 7 and report["model"]["prompt_tokens"] >= 50
        sent = server.requests[0]["json"]["messages"]
        assert "<passage" in sent[1]["content"] and "correctness" in sent[0]["content"]
        asked = len(server.requests)
        server.answer("not json").answer("still not json").answer(verdict(7)).answer(verdict(2))
        again = answer_report(QS, ANSWERS, writer, metrics=["correctness"])  # every verdict is cached ...
        assert len(server.requests) == asked + 4 and again["metrics"] == report["metrics"]
        assert again["model"]["requests"] == 4 and again["model"]["cached"] == 3  # ... but replies that failed to parse
    finally:
        server.close()


@pytest.mark.slow
def test_the_local_model_as_judge_mechanics_and_accounting(llama_server, tmp_path):
    from vectrixdb.chat.writer import ChatWriter, RequestConfig

    writer = ChatWriter(llama_server + "/chat/completions", model="smollm2",
                        request=RequestConfig(response_format="json_object", extra_body={"repeat_penalty": 1.3},
                                              max_tokens=120), cache=str(tmp_path / "c.sqlite"))
    qs = QS[:3]
    report = answer_report(qs, {q.key(): {"answer": f"reply about {q.question}", "sources": []} for q in qs}, writer,
                           metrics=["helpfulness"])
    outcomes = report["outcomes"]["helpfulness"]
    assert sum(outcomes.values()) == 3 and report["scored"]["helpfulness"] == outcomes.get("ok", 0)
    if report["metrics"]["helpfulness"] is not None:
        assert 0 <= report["metrics"]["helpfulness"] <= 1
    assert report["model"]["requests"] >= 3 and report["model"]["prompt_tokens"] > 0
