"""Writing golden questions with a chat model, and measuring how synthetic a set is.

    write.py     write_golden: draft, check, keep (steps 1-4 below, in order)
    passages.py  step 1: which chunks a question may be drafted from
    summary.py   step 2: the kinds plan, and Written (what a run comes to)
    prompts.py   what the model is asked, and the JSON it answers in
    spans.py     numbered sentences, so a model cites without copying
    checks.py    step 3: the checks no model makes, each with its reason
    config.py    the settings, grouped (PassageConfig, KindConfig, CheckConfig, ...)
    audit.py     audit_golden: how synthetic a question set is

Reads collections and golden/ rows; calls models through vectrixdb.chat.
"""
