"""Generation: answers scored with a judge, and the judges themselves.

    answers.py      answer_report and calibrate (is the judge to be believed?)
    judges.py       the rubrics a model judge scores by, and one way to call any judge
    reader.py       answers written from handed text alone (compare_chunking's model half)
    model_ready.py  one small call to see the chat model is there before a long job

A new judge rubric is no new file: one `register(Rubric(...))` call with its declared inputs, an edit
to judges.py (or made in your own code before `answer_report(..., metrics=[...])` names it; a module
here would have to import judges.py, so judges.py cannot import it back without an import circle).
run_evaluation judges its own two rubrics (GENERATION_METRICS) only.
"""
