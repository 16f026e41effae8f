"""The one compiled part of the package: wmma_gen.device._fastlaunch (device/_fastlaunch.c), the
repeat-call HIP launch in C (issue 36). Everything else is in pyproject.toml. optional=True: a
machine without a C compiler or Python headers still installs, and HipDevice uses its pure-Python
launch closure (device/native.py says which one runs)."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("wmma_gen.device._fastlaunch", ["wmma_gen/device/_fastlaunch.c"],
                             extra_compile_args=["-O2"], optional=True)])
