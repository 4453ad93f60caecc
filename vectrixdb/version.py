"""The package version, in a module of its own so that anything may read it without importing vectrixdb/__init__ (which imports the store)."""
__version__ = "0.1.0"
