"""ChatWriter where the spec imports it from (`from vectrixdb.evaluation import ChatWriter`).

The writer itself lives in vectrixdb.chat, beside the store, because ingestion (LLM cuts, chunk
notes) uses it too; this module only hands the same objects over.
"""
from vectrixdb.chat.writer import ChatWriter, LimitConfig, Outcome, RequestConfig, passage

__all__ = ["ChatWriter", "Outcome", "RequestConfig", "LimitConfig", "passage"]
