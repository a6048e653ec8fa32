"""The package installs without a network into a virtualenv that sees
Debian's packages (python3 -m venv --system-site-packages; pip install
--no-index --no-build-isolation build/main/python), and works from there
with no PYTHONPATH."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import graphworld

BUILT = pathlib.Path(graphworld.__file__).resolve().parents[1]  # build/main/python


def test_pip_installs_the_built_package_into_a_venv(tmp_path):
    if not (BUILT / "setup.py").exists():
        pytest.skip(f"no setup.py in {BUILT}: the package was not built by launch/build")
    source = tmp_path / "source"  # a copy: pip's build leaves files beside setup.py
    shutil.copytree(BUILT, source, ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--no-build-isolation", str(source)],
                             env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    script = (
        "import graphworld\n"
        "print(graphworld.__file__)\n"
        "env = graphworld.GraphEnv('squeezenet1.1', seed=0)\n"
        "obs, info = env.reset()\n"
        "print(int(obs['xfer_mask'][:-1].sum()))\n"
    )
    run = subprocess.run([str(venv / "bin" / "python"), "-c", script], env=env, cwd=tmp_path, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    where, allowed = run.stdout.split()
    assert pathlib.Path(where).resolve().is_relative_to(venv.resolve()), where
    assert int(allowed) > 0
