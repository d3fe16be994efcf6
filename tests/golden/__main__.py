"""`venv/bin/python -m tests.golden`: rewrite every golden render from the current code."""

from tests.golden import REPO, regenerate

for path in regenerate():
    print(path.relative_to(REPO))
