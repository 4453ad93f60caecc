"""Conversations (issue 49, item 3): a golden row may hold earlier turns. Bedrock's multi-turn
`conversationTurns`, ragas' MultiTurnSample and DeepEval's ConversationalGolden load into one shape
(Question.turns, the question the last user turn); vectrixdb's own file keeps the turns; retrieval
is asked with the last turn or what `query=` writes, recorded; answer_report judges the last answer
with the earlier turns as context; single-turn rows are as they were."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_anchors_peers import peer
from vectrixdb.errors import BadInput
from vectrixdb.evaluation import (Question, answer_report, check_golden, evaluate, load_questions, load_run,
                                  retrieval_report, save_questions)
from vectrixdb.evaluation.golden.questions import Turn
from tests.conftest import POLICIES

ROOT = Path(__file__).resolve().parent.parent


def said(text: str) -> dict:
    return {"content": [{"text": text}]}


TWO_TURNS = {"conversationTurns": [
    {"prompt": said("Can I defer a loan payment after a flood?"),
     "referenceResponses": [said("Yes: customers in a declared disaster area can defer loan payments.")]},
    {"prompt": said("For how long?"), "referenceResponses": [said("Up to three months, with no late fees.")]}]}


def lines(path: Path, rows: list) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_a_bedrock_two_turn_row_is_one_question_asked_at_its_last_turn(tmp_path):
    (q,) = load_questions(lines(tmp_path / "b.jsonl", [TWO_TURNS]))
    assert q.question == "For how long?" and q.reference == "Up to three months, with no late fees."
    assert q.turns == (Turn("user", "Can I defer a loan payment after a flood?"),
                       Turn("assistant", "Yes: customers in a declared disaster area can defer loan payments."))
    assert q.line == 1 and not q.labelled
    assert q.conversation() == ("user: Can I defer a loan payment after a flood?\nassistant: Yes: customers in a "
                                "declared disaster area can defer loan payments.\nuser: For how long?")
    check = check_golden(str(tmp_path / "b.jsonl"))  # read, and refused until labelled, as a one-turn row is
    assert not check.ok and "Bedrock" in check.summary() and not [f for f in check.errors if f.line]


def test_the_shipped_bedrock_sample_reads_as_before():
    questions = load_questions(str(ROOT / "data" / "golden" / "bedrock_sample.jsonl"))
    assert questions and all(q.turns == () for q in questions)
    assert questions[0].question == "Can I skip a loan payment after a flood?"


def test_a_malformed_later_bedrock_turn_is_named_by_its_turn_and_line(tmp_path):
    bad = {"conversationTurns": [TWO_TURNS["conversationTurns"][0], {"prompt": {"content": [{"text": 5}]}}]}
    path = lines(tmp_path / "b.jsonl", [TWO_TURNS, bad])
    with pytest.raises(BadInput, match=r"b\.jsonl, line 2, conversationTurns\.prompt: turn 2: each content part"):
        load_questions(path)
    (finding,) = [f for f in check_golden(path).errors if f.line]
    assert (finding.line, finding.field) == (2, "conversationTurns.prompt") and finding.message.startswith("turn 2:")


def test_turns_survive_save_and_load_and_a_single_turn_file_is_byte_identical(tmp_path):
    talk = Question("For how long?", "Up to three months.", ["deferment"], "c1",
                    turns=[("user", "Can I defer a loan payment?"), {"role": "assistant", "content": "Yes."}])
    single = Question("Can I defer?", "Yes.", {"deferment": 2, "faq": 0}, "q1", evidence=["defer"], hint="h", draft=True)
    path = save_questions([talk, single], str(tmp_path / "g.jsonl"))
    first, second = Path(path).read_text(encoding="utf-8").splitlines()
    assert first.startswith('{"turns": [{"role": "user", "content": "Can I defer a loan payment?"}, '
                            '{"role": "assistant", "content": "Yes."}], "question": "For how long?"')
    # the single-turn row is written exactly as before turns existed: no turns field, the same bytes
    assert second == ('{"question": "Can I defer?", "reference": "Yes.", "expected": {"deferment": 2, "faq": 0}, '
                      '"id": "q1", "evidence": ["defer"], "hint": "h", "draft": true}')
    assert load_questions(path) == [talk, single] and check_golden(path).golden == [talk, single]
    assert talk.key() == "c1" and Question("Can I defer?").key() == "q-" + __import__("hashlib").sha256(
        b"can i defer?").hexdigest()[:10]  # a single question's name is as before
    # two conversations ending in the same words are different rows, with different names
    other = Question("For how long?", turns=[("user", "Can I freeze my card?")])
    assert other.key() != Question("For how long?", turns=[("user", "Can I defer?")]).key()
    assert other.key() != Question("For how long?").key()


def test_check_golden_names_a_malformed_turn_by_line_and_field(tmp_path):
    rows = [{"question": "For how long?", "expected": ["deferment"], "turns": [{"role": "user", "content": "Defer?"}]},
            {"question": "How much?", "expected": ["mortgage"], "turns": [{"role": "robot", "content": "hi"}]},
            {"question": "When?", "expected": ["mortgage"], "turns": [{"role": "user"}]},
            {"question": "Why?", "expected": ["mortgage"], "turns": [{"role": "user", "content": "a"}, "text"]},
            {"question": "Who?", "expected": ["mortgage"], "turns": "user: hi"},
            {"question": "For how long?", "expected": ["deferment"], "turns": [{"role": "user", "content": "Freeze?"}]}]
    path = lines(tmp_path / "g.jsonl", rows)
    errors = {f.line: f for f in check_golden(path).errors}
    assert sorted(errors) == [2, 3, 4, 5]  # line 6 asks the same words after another turn: not a repeat
    assert errors[2].field == "turns" and errors[2].message == "turn 1: role must be user, assistant or tool, not 'robot'"
    assert errors[3].message == "turn 1: 'content' is missing (a turn is an object with role and content)"
    assert errors[4].message == "turn 2: must be an object with role and content, not str"
    assert errors[5].field == "turns"
    with pytest.raises(BadInput, match=r"g\.jsonl, line 2, turns: turn 1: role must be"):
        load_questions(path)


def test_a_ragas_multi_turn_sample_as_ragas_writes_it_loads(tmp_path):
    code = """
import json
from ragas.dataset_schema import EvaluationDataset, MultiTurnSample
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
talk = MultiTurnSample(user_input=[
    HumanMessage(content="Can I defer a loan payment after a flood?"),
    AIMessage(content="", tool_calls=[ToolCall(name="search", args={"q": "deferment"})]),
    ToolMessage(content="Customers in disaster areas can defer loan payments."),
    AIMessage(content="Yes, you can defer it."),
    HumanMessage(content="For how long?"),
    AIMessage(content="A system's reply, not the test set.")], reference="Up to three months.")
EvaluationDataset(samples=[talk]).to_jsonl("talk.jsonl")
print(json.dumps(EvaluationDataset(samples=[talk]).to_list()))
"""
    listed = peer(code, tmp_path)
    (tmp_path / "listed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in listed))
    for name in ("talk.jsonl", "listed.jsonl"):
        (q,) = load_questions(str(tmp_path / name))
        assert (q.question, q.reference, q.expected) == ("For how long?", "Up to three months.", ())
        assert q.turns == (Turn("user", "Can I defer a loan payment after a flood?"),
                           Turn("tool", "Customers in disaster areas can defer loan payments."),
                           Turn("assistant", "Yes, you can defer it."))
    bad = lines(tmp_path / "bad.jsonl", [{"user_input": [{"content": "Yes.", "type": "ai"}]},
                                         {"user_input": [{"content": "hi", "type": "robot"}]}])
    with pytest.raises(BadInput, match=r"bad\.jsonl, line 1, user_input: a ragas MultiTurnSample with no human"):
        load_questions(bad)
    assert [(f.line, f.field) for f in check_golden(bad).errors if f.line] == [(1, "user_input"), (2, "user_input")]


def test_a_deepeval_conversational_golden_as_deepeval_saves_it_loads(tmp_path):
    code = """
import json
from deepeval.dataset import ConversationalGolden, EvaluationDataset
from deepeval.test_case import Turn
talk = ConversationalGolden(scenario="A customer whose house flooded asks about their loan.",
                            turns=[Turn(role="user", content="Can I defer a loan payment after a flood?"),
                                   Turn(role="assistant", content="Yes, you can defer it."),
                                   Turn(role="user", content="For how long?")],
                            expected_outcome="Up to three months.", name="c-1")
lonely = ConversationalGolden(scenario="Nobody asks anything.", turns=[Turn(role="assistant", content="Hello?")])
names = [EvaluationDataset(goldens=[talk]).save_as(kind, ".", file_name="talk") for kind in ("json", "jsonl")]
names.append(EvaluationDataset(goldens=[talk, lonely]).save_as("jsonl", ".", file_name="lonely"))
print(json.dumps(names))
"""
    *names, lonely = peer(code, tmp_path)
    for name in names:
        (q,) = load_questions(str(tmp_path / Path(name).name))
        assert (q.id, q.question, q.reference) == ("c-1", "For how long?", "Up to three months.")
        assert q.turns == (Turn("user", "Can I defer a loan payment after a flood?"),
                           Turn("assistant", "Yes, you can defer it."))
        assert q.hint == "DeepEval scenario: A customer whose house flooded asks about their loan."
    with pytest.raises(BadInput, match=r"lonely\.jsonl, line 2, turns: a DeepEval ConversationalGolden with no user"):
        load_questions(str(tmp_path / Path(lonely).name))


def test_retrieval_searches_the_last_turn_unless_query_writes_the_text(policies):
    talk = Question("For how long?", None, ["deferment"], "c1",
                    turns=[("user", "Can I defer a loan payment after a flood?"), ("assistant", "Yes.")])
    single = Question("Is a stolen card my problem?", None, ["card-fraud"], "s1")
    searched = []

    def spy(text, n=10):
        searched.append(text)
        return policies.search(text, n, mode="keyword")

    plain = retrieval_report(spy, [talk, single], k=(1, 3))
    assert searched == ["For how long?", "Is a stolen card my problem?"]
    assert "query" not in plain.frame.columns and plain["query"].startswith("question:")
    assert any("1 of 2 questions are conversations searched by their last user turn" in w for w in plain["warnings"])
    searched.clear()
    joined = retrieval_report(spy, [talk, single], k=(1, 3), query=Question.conversation)
    assert searched == [talk.conversation(), "Is a stolen card my problem?"]
    assert joined.frame.loc["c1", "query"] == talk.conversation() and joined.frame.loc["s1", "query"] == single.question
    assert joined["query"].startswith("query=Question.conversation")
    assert not any("conversations searched" in w for w in joined["warnings"])
    # on the collection itself: the last turn alone shares no word with the deferment policy, the conversation does
    alone = retrieval_report(policies, [talk], k=3, mode="keyword")
    whole = retrieval_report(policies, [talk], k=3, mode="keyword", query=Question.conversation)
    assert alone["recall"][3] == 0.0 and whole["recall"][3] == 1.0
    assert alone["misses"][0]["question"] == "For how long?" and "query" not in alone["misses"][0]
    with pytest.raises(BadInput, match=r"query= returned '' for question 'c1'"):
        retrieval_report(spy, [talk], k=1, query=lambda q: "")


def test_evaluate_searches_every_setup_with_what_query_writes_and_records_it(policies, tmp_path):
    talk = Question("For how long?", None, ["deferment"], "c1",
                    turns=[("user", "Can I defer a loan payment after a flood?"), ("assistant", "Yes.")])
    alone = evaluate(policies, [talk], k=3, modes=("keyword",), progress=False)
    whole = evaluate(policies, [talk], k=3, modes=("keyword",), progress=False, query=Question.conversation,
                     save_to=str(tmp_path))
    assert alone.frame.loc[0, "recall@3"] == 0.0 and whole.frame.loc[0, "recall@3"] == 1.0
    assert alone["query"].startswith("question:") and whole["query"].startswith("query=Question.conversation")
    assert load_run(str(tmp_path), whole["run_id"])["query"] == whole["query"]  # saved with the run


def test_sweep_run_evaluation_and_suggestions_search_what_query_writes(policies, tmp_path):
    """query= reaches every verb that searches for a question: a sweep's builds, run_evaluation's
    system and the label suggestions; without it a conversation is asked by its last turn, with the
    same warning, and a pipeline's judge still reads the earlier turns."""
    from vectrixdb.evaluation import run_evaluation, suggest_expected, sweep

    talk = Question("For how long?", None, ["deferment"], "c1",
                    turns=[("user", "Can I defer a loan payment after a flood?"), ("assistant", "Yes.")])
    docs = []
    for doc, text in POLICIES.items():  # the same policies as files: a sweep reads documents itself
        docs.append(str(tmp_path / f"{doc}.md"))
        Path(docs[-1]).write_text(text)
    filed = Question(talk.question, None, ["deferment.md"], "c1", turns=talk.turns)
    keyword = ({"mode": "keyword"},)
    alone = sweep(docs, [filed], search=keyword, k=(3,), progress=False)
    whole = sweep(docs, [filed], search=keyword, k=(3,), progress=False, query=Question.conversation)
    assert alone.frame.loc[0, "recall@3"] == 0.0 and whole.frame.loc[0, "recall@3"] == 1.0
    assert alone["query"].startswith("question:") and whole["query"].startswith("query=Question.conversation")
    assert any("conversations searched by their last user turn" in w for w in alone["warnings"])
    assert not any("conversations searched" in w for w in whole["warnings"])

    searched = []

    def system(text):
        searched.append(text)
        return [h.doc_id for h in policies.search(text, 3, mode="keyword")]

    plain = run_evaluation(system, [talk])
    joined = run_evaluation(system, [talk], query=Question.conversation)
    assert searched == ["For how long?", talk.conversation()]
    assert plain["query"].startswith("question:") and joined["query"].startswith("query=Question.conversation")
    assert joined.frame.loc["c1", "query"] == talk.conversation() and "query" not in plain.frame.columns
    assert any("conversations searched by their last user turn" in w for w in plain["warnings"])
    heard = {}
    run_evaluation(lambda text: "Three months.", [talk],
                   judge=lambda metric, question, reference, answer, sources: heard.setdefault(metric, question) and 1.0)
    assert set(heard.values()) == {talk.conversation()}  # the judge reads the conversation, not the last turn alone

    class Spy:
        def search(self, text, k, **options):
            searched.append(text)
            return policies.search(text, k, **options)
    searched.clear()
    suggest_expected(Spy(), [talk], mode="keyword")
    suggest_expected(Spy(), [talk], mode="keyword", query=Question.conversation)
    assert searched == ["For how long?", talk.conversation()]


def test_answer_report_judges_the_last_answer_with_the_earlier_turns(tmp_path):
    talk = Question("For how long?", "Up to three months.", ["deferment"], "c1",
                    turns=[("user", "Can I defer a loan payment?"), ("assistant", "Yes.")])
    single = Question("Is a stolen card my problem?", "No, once reported.", ["card-fraud"], "s1")
    asked = {}

    def judge(metric, question, reference, answer, sources):
        asked[answer] = question
        return 1.0
    answers = {"c1": {"answer": "Three months."}, "s1": {"answer": "Not after you report it."}}
    report = answer_report([talk, single], answers, judge, metrics=["correctness"])
    assert asked == {"Three months.": talk.conversation(), "Not after you report it.": single.question}
    assert report.frame.loc["c1", "question"] == "For how long?"

    from tests.llama_server import Scripted
    from vectrixdb.chat.writer import ChatWriter
    from vectrixdb.evaluation.generation.judges import messages_for

    plain = messages_for("correctness", "Q?", "R", "A", [])
    assert messages_for("correctness", "Q?", "R", "A", [], turns=()) == plain  # a single question: the same prompt
    server = Scripted()
    try:
        server.answer(json.dumps({"score": 1.0, "reason": "same"})).answer(json.dumps({"score": 1.0, "reason": "ok"}))
        writer = ChatWriter(server.url, model="judge", cache=str(tmp_path / "j.sqlite"), max_retries=0,
                            max_concurrency=1)
        answer_report([talk, single], answers, writer, metrics=["correctness"])
        first, second = (r["json"]["messages"] for r in server.requests)
        assert 'source="conversation so far"' in first[1]["content"] and "assistant: Yes." in first[1]["content"]
        assert first[1]["content"].index("conversation so far") < first[1]["content"].index("For how long?")
        assert "conversation" in first[0]["content"] and "conversation" not in second[1]["content"]
    finally:
        server.close()


def test_a_conversation_is_not_written_as_a_single_turn_ragas_or_deepeval_row(tmp_path):
    from vectrixdb.evaluation import save_deepeval, save_ragas

    talk = Question("For how long?", "Three months.", ["deferment"], "c1", turns=[("user", "Can I defer?")])
    for save, name in ((save_ragas, "r.jsonl"), (save_deepeval, "d.json")):
        with pytest.raises(BadInput, match=r"row 1 \('c1'\) is a conversation with 1 earlier turn"):
            save([talk], str(tmp_path / name))
        assert not (tmp_path / name).exists()
