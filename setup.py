"""The one compiled part of the package: wmma_gen.device._fastlaunch (device/_fastlaunch.c, its
parts in device/fastlaunch/), the repeat-call HIP launch in C (issue 36). Everything else is in
pyproject.toml. optional=True: a machine without a C compiler or Python headers still installs, and
HipDevice uses its pure-Python launch closure (device/native.py says which one runs)."""
import glob

from setuptools import Extension, setup

# One translation unit: _fastlaunch.c #includes its parts (device/fastlaunch/*.c, one job each);
# `depends` rebuilds it when a part changes and puts the parts in the sdist.
setup(ext_modules=[Extension("wmma_gen.device._fastlaunch", ["wmma_gen/device/_fastlaunch.c"],
                             depends=sorted(glob.glob("wmma_gen/device/fastlaunch/*.c")),
                             extra_compile_args=["-O2"], optional=True)])
