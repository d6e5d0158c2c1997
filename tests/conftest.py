"""Shared test configuration: deterministic property tests and a non-interactive matplotlib backend."""
import os

from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")
# Property tests draw the same examples on every run, so a CI failure reproduces exactly.
settings.register_profile("ldpbook", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("ldpbook")
