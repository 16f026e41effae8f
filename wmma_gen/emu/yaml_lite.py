"""A small parser for the YAML subset LLVM writes in `.amdgpu_metadata` blocks.

Supports block mappings, block sequences (`- item`, including sequences of mappings),
plain/quoted scalars and flow sequences (`[ a, b ]`). That is everything
AMDGPUUsage.rst "Code Object V3+ Metadata" uses; anything else raises ValueError.
No third-party dependency (PyYAML is not a project requirement).
"""
from __future__ import annotations


def _scalar(text: str):
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        return [_scalar(x) for x in t[1:-1].split(",") if x.strip()]
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    if t in ("true", "false"):
        return t == "true"
    for conv in (int, float):
        try:
            return conv(t, 0) if conv is int else conv(t)
        except ValueError:
            pass
    return t


def _lines(text: str) -> list[tuple[int, str]]:
    out = []
    for raw in text.splitlines():
        s = raw.rstrip()
        if not s.strip() or s.strip().startswith("#") or s.strip() in ("---", "..."):
            continue
        out.append((len(s) - len(s.lstrip(" ")), s.strip()))
    return out


def loads(text: str):
    lines = _lines(text)
    value, pos = _block(lines, 0, lines[0][0] if lines else 0)
    if pos != len(lines):
        raise ValueError(f"unparsed metadata near: {lines[pos][1]!r}")
    return value


def _block(lines, pos, indent):
    if pos >= len(lines):
        return None, pos
    if lines[pos][1].startswith("- ") or lines[pos][1] == "-":
        return _seq(lines, pos, indent)
    return _map(lines, pos, indent)


def _seq(lines, pos, indent):
    out = []
    while pos < len(lines) and lines[pos][0] == indent and lines[pos][1].startswith("-"):
        rest = lines[pos][1][1:].strip()
        if not rest:
            item, pos = _block(lines, pos + 1, lines[pos + 1][0])
        elif ":" in rest and not rest.startswith(("'", '"')) and _is_key(rest):
            # "- key: value" starts a mapping whose keys sit at indent + 2
            sub = [(indent + 2, rest)]
            j = pos + 1
            while j < len(lines) and lines[j][0] > indent:
                sub.append(lines[j])
                j += 1
            item, k = _map(sub, 0, indent + 2)
            if k != len(sub):
                raise ValueError(f"unparsed metadata near: {sub[k][1]!r}")
            pos = j
        else:
            item, pos = _scalar(rest), pos + 1
        out.append(item)
    return out, pos


def _is_key(text: str) -> bool:
    key, sep, _ = text.partition(":")
    return bool(sep) and " " not in key.strip()


def _map(lines, pos, indent):
    out = {}
    while pos < len(lines) and lines[pos][0] == indent and not lines[pos][1].startswith("- "):
        key, _, rest = lines[pos][1].partition(":")
        rest = rest.strip()
        pos += 1
        if rest:
            out[key.strip()] = _scalar(rest)
        elif pos < len(lines) and (lines[pos][0] > indent or
                                   (lines[pos][0] == indent and lines[pos][1].startswith("- "))):
            out[key.strip()], pos = _block(lines, pos, lines[pos][0])
        else:
            out[key.strip()] = None
    return out, pos
