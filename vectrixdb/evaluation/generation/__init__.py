"""Generation: answers scored with a judge, and the judges themselves.

    answers.py      answer_report and calibrate (is the judge to be believed?)
    judges.py       the rubrics a model judge scores by, and one way to call any judge
    reader.py       answers written from handed text alone (compare_chunking's model half)
    model_ready.py  one small call to see the chat model is there before a long job

A new judge rubric: a `Rubric(...)` with its declared inputs and one `register(...)` line in
judges.py (or in a module of its own here, imported once from judges.py).
"""
