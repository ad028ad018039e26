"""`augmenter grid --ray`: the cases in tests/ray_grid_cases.py, run in a pytest process of
their own. Ray replaces the process's native signal handlers, and a JVM (the Lucene retriever's, started by other
tests in the same process) relies on its own SIGSEGV handling: Lucene calls after `ray.init` crashed the whole test
process. So the Ray cluster lives and dies in a child process."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

CASES = Path(__file__).resolve().parent / "ray_grid_cases.py"


def test_the_ray_grid_cases_pass_in_a_process_of_their_own():
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(CASES)],
        cwd=CASES.parents[1],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout.splitlines()[-1]
