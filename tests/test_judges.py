"""A rubric's declared inputs are enforced: no judge is asked for correctness without a reference,
nor for faithfulness without sources; the refusal says why (issue 27 item 4)."""
import json

import pytest

from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question, answer_report, calibrate
from vectrixdb.evaluation.generation.answers import judge_items
from vectrixdb.evaluation.generation.judges import RUBRICS, as_judge, missing_inputs


def counting_judge():
    calls = []

    def judge(metric, question, reference, answer, sources):
        calls.append(metric)
        return 1.0
    return judge, calls


def test_every_rubric_declares_what_it_reads():
    assert RUBRICS["correctness"].needs_reference and RUBRICS["completeness"].needs_reference
    assert RUBRICS["accuracy"].needs_reference and RUBRICS["faithfulness"].needs_sources
    assert not RUBRICS["helpfulness"].needs_reference and not RUBRICS["helpfulness"].needs_sources
    assert missing_inputs("correctness", None, []) == ["a reference answer"]
    assert missing_inputs("correctness", "   ", ["s"]) == ["a reference answer"]
    assert missing_inputs("faithfulness", None, ["", None]) == ["sources"]
    assert missing_inputs("faithfulness", None, ["page 3 says so"]) == []
    assert missing_inputs("helpfulness", None, []) == []


def test_a_call_without_a_declared_input_is_refused_before_the_judge_is_asked():
    judge, calls = counting_judge()
    verdict = as_judge(judge)("correctness", "How many?", None, "Ten.", ["ten of them"])
    assert verdict.score is None and verdict.status == "missing_input"
    assert "reference answer" in verdict.reason and "correctness" in verdict.reason
    assert as_judge(judge)("faithfulness", "How many?", "Ten", "Ten.", []).status == "missing_input"
    assert calls == []
    assert as_judge(judge)("helpfulness", "How many?", None, "Ten.", []).score == 1.0  # reads neither
    assert calls == ["helpfulness"]


def test_judge_items_counts_the_refusal_and_never_averages_it():
    judge, calls = counting_judge()
    items = [{"key": "a", "question": "q?", "reference": "r", "answer": "x", "sources": ["s"]},
             {"key": "b", "question": "q?", "reference": None, "answer": "x", "sources": ["s"]}]
    rows = judge_items(judge, items, ["correctness"])
    assert rows[0]["correctness"] == 1.0 and rows[1]["correctness"] is None
    assert rows[1]["correctness outcome"] == "missing_input" and calls == ["correctness"]


def test_answer_report_refuses_a_metric_whose_inputs_are_missing_naming_the_items():
    judge, calls = counting_judge()
    qs = [Question("Revenue in 2021?", "$17.5 billion", ["d"], "q1"), Question("Employees?", None, ["d"], "q2")]
    answers = {"q1": {"answer": "$17.5 billion", "sources": ["revenue was $17.5 billion"]},
               "q2": {"answer": "About 29,300", "sources": []}}
    with pytest.raises(BadInput, match=r"correctness cannot be judged: 1 item\(s\) without a reference answer: \['q2'\]"):
        answer_report(qs, answers, judge)
    with pytest.raises(BadInput, match=r"faithfulness cannot be judged: 1 item\(s\) without sources: \['q2'\]"):
        answer_report(qs, answers, judge, metrics=["helpfulness", "faithfulness"])
    assert calls == []  # nothing was asked, so nothing was spent
    report = answer_report(qs, answers, judge, metrics=["helpfulness"])
    assert report["metrics"] == {"helpfulness": 1.0}


def test_calibrate_refuses_labelled_items_without_the_inputs_of_their_metric():
    judge, _ = counting_judge()
    rows = [{"metric": "correctness", "question": "q", "answer": "a", "human": 1.0},
            {"metric": "correctness", "question": "q", "reference": "r", "answer": "b", "human": 0.0}]
    with pytest.raises(BadInput, match="without a reference answer"):
        calibrate(judge, rows)


def test_a_model_judge_is_not_called_without_a_reference(tmp_path):
    from tests.llama_server import Scripted
    from vectrixdb.chat.writer import ChatWriter

    server = Scripted()
    try:
        server.answer(json.dumps({"score": 1.0, "reason": "same"}))
        writer = ChatWriter(server.url, model="judge", cache=str(tmp_path / "j.sqlite"), max_retries=0)
        call = as_judge(writer)
        assert call("correctness", "q?", None, "a", ["s"]).status == "missing_input"
        assert server.requests == []
        assert call("correctness", "q?", "r", "a", ["s"]).score == 1.0 and len(server.requests) == 1
    finally:
        server.close()


def test_each_rubric_reads_only_the_inputs_it_declares():
    from vectrixdb.evaluation.generation.judges import messages_for

    def user(metric):
        return messages_for(metric, "Revenue in 2021?", "REFERENCE-TEXT", "ANSWER-TEXT", ["SOURCE-TEXT"])[1]["content"]
    assert "REFERENCE-TEXT" in user("correctness") and "SOURCE-TEXT" not in user("correctness")
    assert "SOURCE-TEXT" in user("faithfulness") and "REFERENCE-TEXT" not in user("faithfulness")
    assert "REFERENCE-TEXT" not in user("helpfulness") and "SOURCE-TEXT" not in user("helpfulness")
    assert "SOURCE-TEXT" in user("groundedness")  # reads sources when given, needs none
    assert all("ANSWER-TEXT" in user(m) and "Revenue in 2021?" in user(m) for m in RUBRICS)


def test_the_hand_judged_set_is_whole_and_split_by_question():
    from pathlib import Path

    cases = [json.loads(line) for line in (Path(__file__).parent.parent / "data" / "judge_set" / "cases.jsonl")
             .read_text().splitlines()]
    assert len(cases) >= 120 and len({c["id"] for c in cases}) == len(cases)
    split_of = {}
    for c in cases:
        assert split_of.setdefault(c["question_id"], c["split"]) == c["split"]  # never on both sides
        assert set(c["human"]) == {"correctness", "completeness", "faithfulness", "helpfulness"}
        assert all(v in (0, 0.25, 0.5, 0.75, 1) for v in c["human"].values())
        assert c["sources"] and all(s["document"] in ("uber_2021.pdf", "lyft_2021.pdf") and s["page"] >= 1
                                    and len(s["text"]) > 20 for s in c["sources"])
        assert c["kind"] in ("right", "reworded", "figure", "year", "unsupported", "partial", "refusal")
        if c["kind"] in ("right", "reworded"):
            assert c["human"]["correctness"] == 1 and c["human"]["faithfulness"] == 1
        if c["kind"] == "refusal":
            assert c["human"]["correctness"] == 0 and c["human"]["helpfulness"] == 0
    assert {c["split"] for c in cases} == {"dev", "held-out"}
    assert sum(c["split"] == "held-out" for c in cases) >= 60


def test_calibration_figures_by_hand_and_the_lexical_baseline():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
    from judge_calibration import flips, lexical_judge, metric_summary

    def row(i, human, judge, repeat=0):
        return {"id": f"c{i}", "kind": "right", "metric": "correctness", "repeat": repeat, "human": human,
                "judge": judge, "status": "ok" if judge is not None else "parse_failed"}
    same = [row(i, h, h) for i, h in enumerate([0, 0.25, 0.5, 1, 1, 0, 0.75, 0])]
    got = metric_summary(same + [row(9, 1.0, None)], "correctness", resamples=200)
    assert got["kappa"] == 1 and got["weighted_kappa"] == 1 and got["kappa_ci95"] == [1, 1]
    assert got["scored"] == 8 and got["outcomes"] == {"ok": 8, "parse_failed": 1}  # never averaged in
    # 2x2 by hand: person passes 4, fails 4; judge passes all -> po 0.5, pe 0.5 -> kappa 0
    lenient = metric_summary([row(i, h, 1.0) for i, h in enumerate([1, 1, 1, 1, 0, 0, 0, 0])], "correctness",
                             resamples=50)
    assert lenient["kappa"] == 0 and lenient["agreement"] == 0.5
    assert metric_summary([row(0, 1, 1)], "correctness")["kappa"] is None  # n = 1: no figure
    assert flips([row(0, 1, 0.9), row(0, 1, 0.2, 1), row(1, 1, 0.9), row(1, 1, 0.8, 1)]) == \
        {"pairs": 2, "flip_rate": 0.5, "mean_spread": pytest.approx((0.35 + 0.05) / 2)}
    source = ["Revenue was $17.5 billion, or up 57% year-over-year"]
    assert lexical_judge("correctness", "q", "$17.5 billion, up 57%", "It was $17.5 billion, up 57%.", source) == 1
    assert lexical_judge("correctness", "q", "$17.5 billion, up 57%", "It was $11.1 billion, up 57%.", source) == 0
    assert lexical_judge("completeness", "q", "$17.5 billion, up 57%", "Up 57%.", source) == 0.5
    assert lexical_judge("faithfulness", "q", None, "I cannot say.", source) == 1.0
