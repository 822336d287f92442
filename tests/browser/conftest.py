"""Browser fixtures (defined in browser_harness.py, which test modules import by that unique name)."""
from browser_harness import *  # noqa: F401,F403  (the fixtures)
