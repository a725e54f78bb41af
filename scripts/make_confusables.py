"""Write ``shared/data/confusables.json``, the look-alike data of names, from ICU (through PyICU).

Why shipped data and not ICU at run time: PyICU builds from source against ICU's headers (it needs
``libicu-dev``, ``pkg-config`` and ``g++``), which made a fresh clone's first ``make run`` take
minutes. What the server needs of ICU is small and fixed for one Unicode version:

- the confusable skeleton of Unicode Technical Standard #39 is NFD, then each code point replaced by
  its prototype from Unicode's ``confusables.txt``, then NFD again. This writes, for every code
  point that NFD leaves alone (the only ones left after the first NFD), ICU's skeleton of it when it
  differs from the code point: the prototype already in NFD, which the last NFD treats the same;
- the code points with Unicode's ``Default_Ignorable_Code_Point`` property, as ranges.

``shared/confusables.py`` reads the file; ``tests/test_confusables.py`` checks, where PyICU is
installed, that the file is what this script makes and that the skeletons computed from it equal
ICU's for every code point and a corpus of names. To regenerate (after an ICU upgrade)::

    .venv/bin/python -m pip install -e '.[icu]'      # PyICU: needs libicu-dev, pkg-config, g++
    .venv/bin/python scripts/make_confusables.py

A new file changes ``shared.names.LOOK_VERSION`` (it names the data's ICU and Unicode versions), so
every server started with it indexes the accounts' names again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterator

import icu

OUT = Path(__file__).resolve().parent.parent / "shared" / "data" / "confusables.json"
FORMAT = 1
SURROGATES = range(0xD800, 0xE000)


def _hex(text: str) -> str:
    return " ".join(f"{ord(ch):04X}" for ch in text)


def _code_points() -> Iterator[str]:
    for cp in range(0x110000):
        if cp not in SURROGATES:
            yield chr(cp)


def _ranges(points: list[int]) -> list[list[str]]:
    """Sorted code points as ``[first, last]`` pairs of consecutive runs, in hex."""
    runs: list[list[int]] = []
    for cp in points:
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return [[f"{a:04X}", f"{b:04X}"] for a, b in runs]


def build() -> dict[str, Any]:
    """The data, from the ICU that PyICU was built against."""
    spoof = icu.SpoofChecker()
    nfd = icu.Normalizer2.getNFDInstance()
    skeletons = {}
    ignorable = []
    for ch in _code_points():
        if icu.Char.hasBinaryProperty(ch, icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT):
            ignorable.append(ord(ch))
        if nfd.normalize(ch) != ch:
            continue  # the first NFD decomposes it: its own mapping is never looked up
        skeleton = str(spoof.getSkeleton(0, ch))
        if skeleton != ch:
            skeletons[f"{ord(ch):04X}"] = _hex(skeleton)
    return {
        "format": FORMAT,
        "source": "ICU's SpoofChecker and UCHAR_DEFAULT_IGNORABLE_CODE_POINT, by scripts/make_confusables.py",
        "icu_version": icu.ICU_VERSION,
        "unicode_version": icu.UNICODE_VERSION,
        "default_ignorable": _ranges(ignorable),
        "skeletons": skeletons,
    }


def render(data: dict[str, Any]) -> str:
    """The file's text: one skeleton a line, so that a new ICU's changes read as a short diff."""
    head = {k: v for k, v in data.items() if k not in ("default_ignorable", "skeletons")}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append(f'  "default_ignorable": {json.dumps(data["default_ignorable"])},')
    lines.append('  "skeletons": {')
    lines.append(",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in data["skeletons"].items()))
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def main() -> int:
    data = build()
    OUT.write_text(render(data), encoding="utf-8")
    print(f"{OUT}: {len(data['skeletons'])} skeletons, {len(data['default_ignorable'])} ignorable ranges, "
          f"ICU {data['icu_version']}, Unicode {data['unicode_version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
