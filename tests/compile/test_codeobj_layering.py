"""The code-object reader is a leaf (issue 26 item 5): wmma_gen.codeobj imports neither the
compiler nor the emulator, and compiling -- linking, reading the metadata note, decoding the
listing -- loads none of the emulator's instruction semantics. Checked in a fresh interpreter,
since this one has imported everything."""
from __future__ import annotations

import json
import subprocess
import sys

from test_compile_once import ONE_WMMA

_LOADED = """
import json, sys
def loaded(prefix):
    return sorted(m for m in sys.modules if m == prefix or m.startswith(prefix + "."))
"""


def _run(code: str, stdin: str = "") -> dict:
    r = subprocess.run([sys.executable, "-c", _LOADED + code], input=stdin, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_codeobj_imports_neither_compiler_nor_emulator():
    # the package imports its names on first use (codeobj/__init__.py), so load every one of them
    out = _run("import wmma_gen.codeobj as c\n"
               "[getattr(c, name) for name in c.__all__]\n"
               "print(json.dumps({p: loaded(p) for p in ('wmma_gen.compiler', 'wmma_gen.emu', 'wmma_gen.codeobj')}))")
    assert out["wmma_gen.compiler"] == [] and out["wmma_gen.emu"] == []
    assert "wmma_gen.codeobj.machine" in out["wmma_gen.codeobj"]        # the listing's decoder came along


def test_compiling_and_listing_do_not_load_the_emulator():
    out = _run("from wmma_gen.compiler import compile_mlir\n"
               "k = compile_mlir(sys.stdin.read(), 'gfx1100', cache=False)\n"
               "print(json.dumps({'wmma': k.isa.count('v_wmma_'), 'name': k.metadata.name,\n"
               "                  'emu': loaded('wmma_gen.emu'), 'codeobj': 'wmma_gen.codeobj' in sys.modules}))",
               stdin=ONE_WMMA)
    assert out["wmma"] == 1 and out["name"] == "one_wmma"           # the listing and the note were read
    assert out["codeobj"] and out["emu"] == [], out["emu"]
