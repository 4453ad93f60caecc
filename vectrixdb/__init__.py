"""vectrixdb: measure retrieval on your own documents and questions."""
__version__ = "0.1.0"
