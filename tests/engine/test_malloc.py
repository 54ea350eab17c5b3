"""engine/_malloc.py: freed array memory stays mapped between steps on glibc, unless the user
set glibc's own thresholds."""

import os
import platform
import resource
import subprocess
import sys

import numpy as np
import pytest

import engine  # noqa: F401 - applies the settings
from engine import _malloc

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="glibc's mallopt only")
def test_applied_on_glibc():
    assert _malloc.applied


@pytest.mark.skipif(not glibc, reason="glibc's mallopt only")
def test_a_freed_step_of_temporaries_is_not_faulted_in_again():
    def step():
        arrays = [np.ones((1024, 512), np.float32) for _ in range(8)]  # 16 MB, 2 MB each
        return float(sum(a[0, 0] for a in arrays))

    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 5 * 4096 // 4  # without the setting: every page of every step, 20,480


@pytest.mark.skipif(not glibc, reason="glibc's mallopt only")
def test_the_users_own_setting_wins():
    env = dict(os.environ, MALLOC_TRIM_THRESHOLD_="131072")
    code = "import engine._malloc as m; print(m.applied)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
