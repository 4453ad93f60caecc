"""Measuring retrieval (and answers) on your own questions.

Names load lazily so `import vectrixdb.evaluation` stays cheap; each lives in the module below.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "Question": "golden", "save_questions": "golden", "load_questions": "golden", "read_golden": "golden",
    "save_ragas": "anchors_write", "save_deepeval": "anchors_write",
    "check_golden": "schema", "GoldenCheck": "schema", "Finding": "schema",
    "suggest_expected": "suggest",
    "load_beir": "beir", "BeirData": "beir",
    "Report": "report", "load_report": "report",
    "answer_report": "answers", "calibrate": "answers",
    "run_evaluation": "pipeline",
    "compare_runs": "experiments",
    "questions_needed": "power", "ppi_mean": "ppi",
    "ChatWriter": "chat", "RequestConfig": "chat", "LimitConfig": "chat",
    "write_golden": "writing", "Written": "writing_summary", "audit_golden": "audit",
    "PassageConfig": "writing_config", "KindConfig": "writing_config", "CheckConfig": "writing_config",
    "CriticConfig": "writing_config", "EvolutionConfig": "writing_config", "WritingConfig": "writing_config",
    "retrieval_report": "retrieval", "evaluate": "retrieval", "metric_table": "metrics",
    "pool": "pooling",
    "list_runs": "runs", "load_run": "runs",
    "answer_cutoff": "cutoff",
    "sweep_markdown": "sweep",
    "compare_chunking": "chunking", "CompareConfig": "chunking_config",
}
__all__ = sorted([*_EXPORTS, "sweep"])

# The function shares its module's name, so it is bound here once (the module is light): a lazy
# lookup would hand back the module after its first import.
from vectrixdb.evaluation.retrieval.sweep import sweep  # noqa: E402


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"vectrixdb.evaluation.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'vectrixdb.evaluation' has no attribute {name!r}")
