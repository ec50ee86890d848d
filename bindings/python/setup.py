# SPDX-License-Identifier: Apache-2.0
"""setuptools's build of this package, whose metadata is pyproject.toml's. Only the build's directories
are set here: setuptools puts build/ and fastgemm.egg-info in the source tree, where pip builds a local
directory, and they would stay there; a temporary directory holds them instead, removed when the build's
process ends (each step of pip's build is a process of its own). setuptools runs this file with exec, so
it leaves no __pycache__ either."""
import atexit
import shutil
import tempfile

import setuptools

scratch = tempfile.mkdtemp(prefix="fastgemm-python-build-")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)
setuptools.setup(options={"build": {"build_base": f"{scratch}/build"}, "egg_info": {"egg_base": scratch}})
